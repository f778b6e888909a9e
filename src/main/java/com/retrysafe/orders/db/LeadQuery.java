package com.retrysafe.orders.db;

/**
 * A write that one feature lends to another feature's statement as the first query of its
 * {@code WITH}, the one the borrower's own writes depend on: they run only for its rows (a
 * {@code WITH} query that reads it, {@code EXISTS (SELECT 1 FROM name)}), so PostgreSQL makes
 * this write first and the borrower's change happens exactly when this one did. Like
 * {@link WithQuery}, the owner keeps the SQL and the borrower only places it.
 *
 * @param sql the write, with its parameters numbered from {@code $1}
 * @param parameters how many parameters it takes ({@code $1} to {@code $parameters})
 */
public record LeadQuery(String sql, int parameters) {

    /**
     * This write as the borrowing statement places it, at class initialisation.
     *
     * @param first the number the borrower gives this write's first parameter
     */
    public String placed(int first) {
        return WithQuery.numberedFrom(sql, parameters, first);
    }
}
