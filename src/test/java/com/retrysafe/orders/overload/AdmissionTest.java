package com.retrysafe.orders.overload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The door's verdict and the owner's share, without I/O (API.md section 12). */
class AdmissionTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final OverloadMetrics metrics = new OverloadMetrics(registry);

    private static OverloadConfig config(int limit, int ownerMax) {
        return new OverloadConfig() {
            public boolean enabled() {
                return true;
            }

            public Limit limit() {
                return new Limit() {
                    public int initial() {
                        return limit;
                    }

                    public int min() {
                        return limit;
                    }

                    public int max() {
                        return limit;
                    }
                };
            }

            public Owner owner() {
                return () -> ownerMax;
            }

            public RetryAfter retryAfter() {
                return new RetryAfter() {
                    public Duration min() {
                        return Duration.ofSeconds(1);
                    }

                    public Duration max() {
                        return Duration.ofSeconds(30);
                    }
                };
            }
        };
    }

    @Test
    @DisplayName("past the limit a request is shed at once; a released place admits the next")
    void shedsPastTheLimitAndAdmitsAgainOnceAPlaceIsFree() {
        Admission admission = new Admission(config(3, 16), metrics);
        List<Admission.Permit> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(admission.tryAdmit().orElseThrow());
        }
        assertTrue(admission.tryAdmit().isEmpty(), "a fourth request while three are in progress");
        assertEquals(1.0, registry.get("http.admission.shed").counter().count());
        assertEquals(3.0, registry.get("http.admission.in.flight").gauge().value());

        held.remove(0).answered();
        Optional<Admission.Permit> next = admission.tryAdmit();
        assertTrue(next.isPresent(), "a place was freed");
        assertEquals(3.0, registry.get("http.admission.in.flight").gauge().value());
    }

    @Test
    @DisplayName("a permit is released once, however its request is told to end")
    void aPermitIsReleasedOnce() {
        Admission admission = new Admission(config(1, 16), metrics);
        Admission.Permit permit = admission.tryAdmit().orElseThrow();
        permit.answered();
        permit.dropped();
        permit.ignored();
        assertEquals(0.0, registry.get("http.admission.in.flight").gauge().value());
        Admission.Permit again = admission.tryAdmit().orElseThrow();
        assertTrue(admission.tryAdmit().isEmpty(), "one place, taken again: released once, not three times");
        again.ignored();
    }

    @Test
    @DisplayName("an owner holds at most overload.owner.max-in-flight places, and never more than half the door's smallest limit")
    void anOwnersShareIsCapped() {
        OwnerLimits owners = new OwnerLimits(config(40, 16), metrics);
        for (int i = 0; i < 16; i++) {
            assertTrue(owners.tryEnter(7), "place " + (i + 1) + " of 16");
        }
        assertFalse(owners.tryEnter(7), "a 17th request of the same owner");
        assertTrue(owners.tryEnter(8), "another owner is not affected");
        assertEquals(1.0, registry.get("http.admission.owner.limited").counter().count());
        owners.leave(7);
        assertTrue(owners.tryEnter(7), "a place the owner freed");

        OwnerLimits halfOfTen = new OwnerLimits(config(10, 16), metrics);
        for (int i = 0; i < 5; i++) {
            assertTrue(halfOfTen.tryEnter(9));
        }
        assertFalse(halfOfTen.tryEnter(9), "half of a smallest limit of 10");
    }

    @Test
    @DisplayName("leaving frees the owner's places; an owner without work in progress holds no memory")
    void leavingForgetsIdleOwners() {
        OwnerLimits owners = new OwnerLimits(config(40, 16), metrics);
        owners.tryEnter(5);
        owners.tryEnter(5);
        owners.leave(5);
        assertEquals(1, owners.inFlight(5));
        owners.leave(5);
        assertEquals(0, owners.inFlight(5));
    }

    @Test
    @DisplayName("0 turns the owner limit off")
    void zeroTurnsTheOwnerLimitOff() {
        OwnerLimits owners = new OwnerLimits(config(40, 0), metrics);
        for (int i = 0; i < 100; i++) {
            assertTrue(owners.tryEnter(3));
        }
    }

    @Test
    @DisplayName("a 429's Retry-After is 1-2 s for an owner now and then at its share, and widens for one whose requests are mostly refused")
    void aFloodingOwnersRetryAfterWidens() {
        OwnerLimits owners = new OwnerLimits(config(40, 16), metrics);
        for (int i = 0; i < 16; i++) {
            owners.tryEnter(7);
            owners.tryEnter(8);
        }
        assertFalse(owners.tryEnter(8));
        long once = owners.retryAfterSeconds(8);
        assertTrue(once >= 1 && once <= 2, "refused once: " + once);
        long widest = 0;
        for (int i = 0; i < 1_000; i++) {
            assertFalse(owners.tryEnter(7));
            widest = Math.max(widest, owners.retryAfterSeconds(7));
        }
        assertTrue(widest > 10, "1,000 refusals and no admission: the widest Retry-After was " + widest + " s");
        assertTrue(widest <= 30, "never past overload.retry-after.max: " + widest);
        long other = owners.retryAfterSeconds(8);
        assertTrue(other >= 1 && other <= 2, "the other owner, refused twice, is not told what the flood is: " + other);
    }
}
