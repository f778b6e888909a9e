package com.retrysafe.orders.db;

import java.time.Duration;

import io.smallrye.mutiny.Uni;

/**
 * A client-side bound on database work. The server's statement_timeout is the real bound; this
 * one only catches a server or network that has stopped answering altogether.
 */
public final class Deadline {

    private Deadline() {
    }

    public static <T> Uni<T> within(Uni<T> databaseWork, Duration limit) {
        return databaseWork.ifNoItem().after(limit)
                .failWith(() -> new DatabaseTimeoutException("no answer from the database within " + limit));
    }
}
