package com.retrysafe.orders.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** A lent write is placed in the borrower's statement with its parameters numbered after the borrower's. */
class WithQueryTest {

    private static final WithQuery LENT = new WithQuery(
            "INSERT INTO t (a, b) SELECT $1, $2::text::jsonb FROM " + WithQuery.ROWS + " WHERE $1 > 0", 2);

    @Test
    void itsParametersFollowTheBorrowersAndItReadsTheBorrowersRows() {
        assertEquals("INSERT INTO t (a, b) SELECT $7, $8::text::jsonb FROM placed WHERE $7 > 0", LENT.placed("placed", 7));
        assertEquals("INSERT INTO t (a, b) SELECT $1, $2::text::jsonb FROM x WHERE $1 > 0", LENT.placed("x", 1));
    }

    @Test
    void aWriteThatUsesMoreParametersThanItDeclaresIsRefused() {
        WithQuery miscounted = new WithQuery("UPDATE t SET a = $3 FROM " + WithQuery.ROWS, 2);
        assertThrows(IllegalStateException.class, () -> miscounted.placed("placed", 5));
    }

    @Test
    void aLeadingWriteIsNumberedLikeALentOneAndRefusesExtraParameters() {
        LeadQuery lead = new LeadQuery("INSERT INTO t (a, b) VALUES ($1, $2) RETURNING a", 2);
        assertEquals("INSERT INTO t (a, b) VALUES ($3, $4) RETURNING a", lead.placed(3));
        assertThrows(IllegalStateException.class, () -> new LeadQuery("UPDATE t SET a = $3", 2).placed(1));
    }

    @Test
    void aWriteThatDoesNotNameTheBorrowersRowsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new WithQuery("UPDATE t SET a = $1", 1));
    }
}
