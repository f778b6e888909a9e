package com.retrysafe.orders.overload;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * How the service turns work away when it has more than it can finish in time (API.md section 12).
 * Each setting is also an environment variable (OVERLOAD_...).
 */
@ConfigMapping(prefix = "overload")
public interface OverloadConfig {

    /** Off, every request is admitted at the door (the budget and the per-owner limit still hold). */
    @WithDefault("true")
    boolean enabled();

    /** The adaptive limit on requests in progress (docs/DESIGN.md "Overload"). */
    Limit limit();

    /** Each owner's share: past it, 429 too-many-requests. */
    Owner owner();

    /** The {@code Retry-After} of a shed answer. */
    RetryAfter retryAfter();

    interface Limit {

        /** Requests in progress the limit starts from: its floor. */
        @WithDefault("32")
        int initial();

        /**
         * It never goes below this, so a slow spell can't shut the door on everyone, nor starve the
         * database of work: above the pool's size (20), with a short queue for it. (A floor of 16,
         * under the pool, left connections idle while the door shed: 0.55 x C in a CI run of
         * OverloadIT.)
         */
        @WithDefault("32")
        int min();

        /** Nor above this. */
        @WithDefault("100")
        int max();

        /**
         * The average answer time the limit aims at: past it over a window in which the door
         * turned requests away, the limit narrows by a tenth; within it, it widens
         * ({@link AnswerTimeLimit}). A twentieth of the shortest client timeout API.md
         * names (2 s), so what is admitted is answered while its client waits; and above what a
         * steady load at capacity takes, so it is not shed: bench/run.sh's 64 connections answer
         * in 28 ms, 53 ms (p50) on one hot SKU, whose orders wait for its row lock in turn.
         */
        @WithDefault("100ms")
        Duration target();

        /** How often the limit moves: the answers of each window make one sample. */
        @WithDefault("100ms")
        Duration window();
    }

    interface Owner {

        /**
         * Requests of one owner in progress at once, and never more than half the door's smallest
         * limit (16 of 32); 0 turns the limit off. Generous for a shopper (who has one or two at
         * most): at a few milliseconds a create, 16 at once are thousands of orders a second, and a
         * quiet owner's trickle is not refused for a latency spike of a second. At half the door's
         * floor, one owner's flood leaves the other half to the others. (8 had a quiet owner of 20
         * orders a second refused in one CI run of OverloadIT, its answers slowed past 400 ms.)
         */
        @WithDefault("16")
        int maxInFlight();
    }

    interface RetryAfter {

        /** The shortest Retry-After on a shed answer. */
        @WithDefault("1s")
        Duration min();

        /**
         * How far the spread grows: the window is {@code 2 x min / (1 - r)^2} wide for a share r of
         * the requests shed in the last second or two, its floor raised by the overload's age up to
         * half of this, its top at most this (RetryAfterPolicy). Past the 30 s a client commonly
         * retries for: in an overload that has lasted, a client told to come back within it is
         * turned away again, each time at a shed answer's cost (OverloadIT: 0.84 x C in orders with
         * 60 s, 0.66 with 30 s, docs/RELIABILITY.md scenario 12).
         */
        @WithDefault("60s")
        Duration max();
    }
}
