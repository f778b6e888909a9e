package com.retrysafe.orders.db;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A write that one feature lends to another feature's statement, as one query of its {@code WITH}:
 * writes of several features that commit together then cost PostgreSQL one statement, not one
 * each (bench/README.md, "the shapes a create could take"). The feature that owns the table keeps
 * the SQL; the borrowing statement only places it. The write runs once for each row of a query of
 * the borrowing statement, so it happens exactly when the borrower's own change did.
 *
 * @param sql the write, with its parameters numbered from {@code $1} and {@value #ROWS} where the
 *        borrower's rows are named
 * @param parameters how many parameters it takes ({@code $1} to {@code $parameters})
 */
public record WithQuery(String sql, int parameters) {

    public static final String ROWS = "{rows}";

    private static final Pattern PARAMETER = Pattern.compile("\\$(\\d+)");

    public WithQuery {
        if (!sql.contains(ROWS)) {
            throw new IllegalArgumentException("a lent write names the borrower's rows as " + ROWS + ": " + sql);
        }
    }

    /**
     * This write as the borrowing statement places it, at class initialisation (the text is the
     * same for every request, so it is prepared once per connection).
     *
     * @param rows the borrower's query whose rows this write runs for
     * @param first the number the borrower gives this write's first parameter
     */
    public String placed(String rows, int first) {
        return numberedFrom(sql.replace(ROWS, rows), parameters, first);
    }

    /** {@code sql}'s parameters {@code $1} to {@code $parameters} renumbered to start at {@code $first}. */
    static String numberedFrom(String sql, int parameters, int first) {
        Matcher numbered = PARAMETER.matcher(sql);
        StringBuilder renumbered = new StringBuilder();
        while (numbered.find()) {
            int own = Integer.parseInt(numbered.group(1));
            if (own > parameters) {
                throw new IllegalStateException("$" + own + " in a write of " + parameters + " parameters: " + sql);
            }
            numbered.appendReplacement(renumbered, "\\$" + (own + first - 1));
        }
        return numbered.appendTail(renumbered).toString();
    }
}
