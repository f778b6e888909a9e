package com.retrysafe.orders.idempotency;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class FingerprintTest {

    @Test
    void theOrderFieldsAreAddedInDoesNotMatter() {
        assertEquals(Fingerprint.of(Operation.CREATE_ORDER, 7).field("skuId", 1).field("quantity", 2).sha256(),
                Fingerprint.of(Operation.CREATE_ORDER, 7).field("quantity", 2).field("skuId", 1).sha256());
    }

    @Test
    void everyPartOfTheRequestCounts() {
        String base = Fingerprint.of(Operation.CREATE_ORDER, 7).field("skuId", 1).field("quantity", 2).sha256();
        assertNotEquals(base, Fingerprint.of(Operation.CREATE_ORDER, 8).field("skuId", 1).field("quantity", 2).sha256());
        assertNotEquals(base, Fingerprint.of(Operation.CREATE_ORDER, 7).field("skuId", 2).field("quantity", 1).sha256());
        assertNotEquals(base, Fingerprint.of(Operation.CREATE_ORDER, 7).field("skuId", 1).field("quantity", 3).sha256());
        assertNotEquals(base, Fingerprint.of(Operation.CREATE_ORDER, 7).param("skuId", 1).field("quantity", 2).sha256());
        assertEquals(64, base.length());
    }

    @Test
    void aSeparatorInsideAStringCannotForgeAnotherRequest() {
        assertNotEquals(
                Fingerprint.of(Operation.CREATE_ORDER, 7).field("a", "x\nfield.b=n:1").sha256(),
                Fingerprint.of(Operation.CREATE_ORDER, 7).field("a", "x").field("b", 1).sha256());
        assertNotEquals(
                Fingerprint.of(Operation.CREATE_ORDER, 7).field("a", "1").sha256(),
                Fingerprint.of(Operation.CREATE_ORDER, 7).field("a", 1).sha256());
    }

    @Test
    void theCanonicalFormIsStable() {
        // Changing it would turn every stored key into a conflict: this pins it.
        assertEquals("v1\noperation=CREATE_ORDER\nowner=7\nfield.quantity=n:2\nfield.skuId=n:10001\n",
                Fingerprint.of(Operation.CREATE_ORDER, 7).field("skuId", 10001).field("quantity", 2).canonicalForm());
    }
}
