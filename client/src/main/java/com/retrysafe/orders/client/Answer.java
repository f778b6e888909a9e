package com.retrysafe.orders.client;

import java.time.Duration;
import java.util.Optional;

/** What one attempt got back: an HTTP answer, or none at all. */
public sealed interface Answer {

    /**
     * An HTTP answer. {@code problemType} is the slug of a problem body's {@code type}
     * ({@code /problems/request-in-progress} gives {@code request-in-progress}), null for other bodies.
     */
    record Http(int status, String problemType, Optional<Duration> retryAfter, String body,
            Optional<String> location, boolean replayed) implements Answer {

        @Override
        public String toString() {
            return status + (problemType == null ? "" : " " + problemType);
        }
    }

    /**
     * No answer: the connection failed or broke, or the attempt's timeout passed. The request may
     * or may not have reached the service, so only the same key may ask again.
     */
    record None(Kind kind, String cause) implements Answer {

        public enum Kind {
            /** The connection could not be made, or broke before the answer was read. */
            CONNECTION_LOST,
            /** The attempt's own timeout passed first. */
            TIMED_OUT
        }

        @Override
        public String toString() {
            return kind + " (" + cause + ")";
        }
    }
}
