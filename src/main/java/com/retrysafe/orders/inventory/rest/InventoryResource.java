package com.retrysafe.orders.inventory.rest;

import java.time.Duration;
import java.util.List;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;

import com.retrysafe.orders.db.BoundedTransaction;
import com.retrysafe.orders.db.DatabaseConfig;
import com.retrysafe.orders.db.Deadline;
import com.retrysafe.orders.inventory.Inventory;
import com.retrysafe.orders.inventory.SetStockRequest;
import com.retrysafe.orders.inventory.repository.InventoryRepository;
import com.retrysafe.orders.web.AuthenticatedOwner;
import com.retrysafe.orders.web.BodyValidation;
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemException;

import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/** Stock levels. {@code PUT} sets an absolute value, so it is idempotent by nature and needs no key. */
@Path("/api/inventory/{skuId}")
@Tag(name = "Inventory")
@Produces(MediaType.APPLICATION_JSON)
public class InventoryResource {

    private final Pool pool;
    private final InventoryRepository inventory;
    private final AuthenticatedOwner owner;
    private final BodyValidation bodyValidation;
    private final Duration dbTimeout;

    public InventoryResource(Pool pool, InventoryRepository inventory, AuthenticatedOwner owner,
            BodyValidation bodyValidation, DatabaseConfig database) {
        this.pool = pool;
        this.inventory = inventory;
        this.owner = owner;
        this.bodyValidation = bodyValidation;
        this.dbTimeout = database.clientDeadline();
    }

    @PUT
    @RolesAllowed("inventory-admin")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Set a SKU's available stock (needs group inventory-admin)",
            description = "Sets, never adds: repeating the same request changes nothing, so it needs no Idempotency-Key.")
    @APIResponse(responseCode = "200", description = "The stock as set.",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Inventory.class)))
    public Uni<Inventory> set(@RestPath long skuId, SetStockRequest request) {
        bodyValidation.valid(request);
        owner.id();
        if (skuId <= 0) {
            throw ProblemException.invalidRequest(List.of(new Problem.Violation("skuId", "must be greater than 0")));
        }
        // In a transaction, not autocommit: past the deadline a 503 is then true (COMMIT never sent).
        return BoundedTransaction.run(pool, dbTimeout,
                tx -> inventory.set(tx, skuId, Math.toIntExact(request.available())));
    }

    @GET
    @Authenticated
    @Operation(summary = "Read a SKU's available stock")
    @APIResponse(responseCode = "200", description = "The stock.",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Inventory.class)))
    @APIResponse(responseCode = "404", description = "No such SKU.",
            extensions = @Extension(name = "x-problem-types", value = "not-found"))
    public Uni<Inventory> get(@RestPath long skuId) {
        owner.id();
        return Deadline.within(pool, dbTimeout, connection -> inventory.find(connection, skuId))
                .map(ProblemException.orNotFound("No SKU " + skuId));
    }
}
