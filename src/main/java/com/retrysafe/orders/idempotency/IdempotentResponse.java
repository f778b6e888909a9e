package com.retrysafe.orders.idempotency;

import org.jboss.resteasy.reactive.RestResponse;

import com.retrysafe.orders.web.Problem;

/** A stored response and whether this answer replays it. */
public record IdempotentResponse(StoredResponse response, boolean replayed) {

    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    /** The same status, body, content type and Location whether executed now or replayed. */
    public RestResponse<String> toRestResponse() {
        RestResponse.ResponseBuilder<String> builder = RestResponse.ResponseBuilder
                .<String> create(response.status())
                .entity(response.bodyJson())
                .type(response.isProblem() ? Problem.MEDIA_TYPE : "application/json")
                .header(REPLAYED_HEADER, Boolean.toString(replayed));
        if (response.location() != null) {
            // Sent as stored (a path), so a replay through another host or gateway is identical.
            builder.header("Location", response.location());
        }
        return builder.build();
    }
}
