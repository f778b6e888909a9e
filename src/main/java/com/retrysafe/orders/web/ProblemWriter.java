package com.retrysafe.orders.web;

import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.resteasy.reactive.RestResponse;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.retrysafe.orders.common.JsonText;

/** Serializes problems once, to a String, so the same bytes can be stored and replayed. */
@ApplicationScoped
public class ProblemWriter {

    private final ObjectMapper mapper;

    public ProblemWriter(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    public String json(Problem problem) {
        return JsonText.write(mapper, problem, "A problem body could not be serialized");
    }

    public RestResponse<String> response(Problem problem, Map<String, String> headers) {
        RestResponse.ResponseBuilder<String> builder = RestResponse.ResponseBuilder
                .<String> create(problem.status())
                .entity(json(problem))
                .type(Problem.MEDIA_TYPE);
        headers.forEach(builder::header);
        return builder.build();
    }
}
