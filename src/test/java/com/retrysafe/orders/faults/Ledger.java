package com.retrysafe.orders.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.retrysafe.orders.packaged.PackagedJar;

/**
 * What the database says happened for one owner on one SKU, held against what the clients saw:
 * the ledger every fault scenario must leave exact.
 */
record Ledger(long orders, long sold, long available, long unfinished, List<String> lost, List<String> duplicated) {

    /**
     * @param firstCreated the body of the first 201 each key got, by key
     */
    static Ledger read(PackagedJar jar, long owner, long skuId, Map<String, String> firstCreated) throws Exception {
        try (Connection db = jar.jdbc()) {
            long orders = single(db, "SELECT count(*) FROM purchase_order WHERE owner_id = ?", owner);
            long sold = single(db, "SELECT coalesce(sum(quantity), 0) FROM purchase_order WHERE owner_id = ?", owner);
            long available = single(db, "SELECT available FROM sku_inventory WHERE sku_id = ?", skuId);
            long unfinished = single(db, "SELECT count(*) FROM idempotency_record WHERE owner_id = ?"
                    + " AND status NOT IN ('SUCCEEDED', 'FAILED_FINAL')", owner);
            Map<String, Long> recordOrder = new HashMap<>();
            try (PreparedStatement query = db.prepareStatement("SELECT idempotency_key, resource_id"
                    + " FROM idempotency_record WHERE owner_id = ? AND http_status = 201")) {
                query.setLong(1, owner);
                try (ResultSet rows = query.executeQuery()) {
                    while (rows.next()) {
                        recordOrder.put(rows.getString(1), rows.getLong(2));
                    }
                }
            }
            Set<Long> orderIds = new HashSet<>();
            try (PreparedStatement query = db.prepareStatement("SELECT id FROM purchase_order WHERE owner_id = ?")) {
                query.setLong(1, owner);
                try (ResultSet rows = query.executeQuery()) {
                    while (rows.next()) {
                        orderIds.add(rows.getLong(1));
                    }
                }
            }
            List<String> lost = new ArrayList<>();
            for (Map.Entry<String, String> seen : firstCreated.entrySet()) {
                JsonNode order = Answer.JSON.readTree(seen.getValue());
                Long stored = recordOrder.get(seen.getKey());
                if (stored == null || stored != order.path("orderId").asLong() || !orderIds.contains(stored)) {
                    lost.add(seen.getKey() + ": answered " + seen.getValue() + ", recorded order " + stored);
                }
            }
            for (Map.Entry<String, Long> record : recordOrder.entrySet()) {
                if (!orderIds.contains(record.getValue())) {
                    lost.add(record.getKey() + ": recorded order " + record.getValue() + " does not exist");
                }
            }
            // An order no record points at was made by a second execution of some request.
            List<String> duplicated = new ArrayList<>();
            Set<Long> referenced = new HashSet<>(recordOrder.values());
            for (Long id : orderIds) {
                if (!referenced.contains(id)) {
                    duplicated.add("order " + id + " belongs to no key");
                }
            }
            return new Ledger(orders, sold, available, unfinished, lost, duplicated);
        }
    }

    /** Every key that got a 201 has exactly its order, nothing else exists, stock matches, nothing half-done. */
    void assertExact(int initialStock, Map<String, String> firstCreated) {
        assertEquals(List.of(), lost.subList(0, Math.min(5, lost.size())), lost.size() + " lost (first 5 shown)");
        assertEquals(List.of(), duplicated.subList(0, Math.min(5, duplicated.size())),
                duplicated.size() + " duplicated (first 5 shown)");
        assertEquals(firstCreated.size(), orders, "orders in the database = keys answered 201");
        assertEquals(initialStock - sold, available, "stock left = initial stock - the sum of the orders");
        assertEquals(0, unfinished, "no record is left PROCESSING (or retryable): every one finished or absent");
    }

    static long single(Connection db, String sql, Object... arguments) throws Exception {
        try (PreparedStatement statement = db.prepareStatement(sql)) {
            for (int i = 0; i < arguments.length; i++) {
                statement.setObject(i + 1, arguments[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }
}
