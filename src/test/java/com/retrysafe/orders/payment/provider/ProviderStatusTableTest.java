package com.retrysafe.orders.payment.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;

import org.junit.jupiter.api.Test;

import com.retrysafe.orders.payment.provider.PaymentProvider.StatusMeaning;

/**
 * {@link PaymentProvider#meaningOf} over every status from 100 to 599, against API.md section 8 as
 * written: a 200 is read for its body, a 402 declines, a 4xx refuses unless it is about timing or
 * concurrency (408, 409, 425, 429), and every other answer leaves the outcome unknown.
 */
class ProviderStatusTableTest {

    private static final Set<Integer> TIMING_OR_CONCURRENCY = Set.of(408, 409, 425, 429);

    @Test
    void everyStatusMeansWhatTheContractSays() {
        for (int status = 100; status <= 599; status++) {
            assertEquals(contract(status), PaymentProvider.meaningOf(status), "status " + status);
        }
    }

    @Test
    void statusesOutsideTheRangeLeaveTheOutcomeUnknown() {
        for (int status : new int[] { -1, 0, 99, 600, 999 }) {
            assertEquals(StatusMeaning.UNKNOWN, PaymentProvider.meaningOf(status), "status " + status);
        }
    }

    private static StatusMeaning contract(int status) {
        if (status == 200) {
            return StatusMeaning.SUCCESS_IF_THE_BODY_SAYS_SO;
        }
        if (status == 402) {
            return StatusMeaning.DECLINED;
        }
        if (status >= 400 && status < 500 && !TIMING_OR_CONCURRENCY.contains(status)) {
            return StatusMeaning.REFUSED;
        }
        return StatusMeaning.UNKNOWN;
    }
}
