package com.retrysafe.orders.db;

import java.util.function.Function;

import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowIterator;
import io.vertx.mutiny.sqlclient.RowSet;

/** Reading a statement's rows where at most one is expected. */
public final class Rows {

    private Rows() {
    }

    /** For {@code Uni.map}: the first row, mapped, or null when the statement returned none. */
    public static <T> Function<RowSet<Row>, T> firstOrNull(Function<Row, T> mapper) {
        return rows -> {
            RowIterator<Row> iterator = rows.iterator();
            return iterator.hasNext() ? mapper.apply(iterator.next()) : null;
        };
    }
}
