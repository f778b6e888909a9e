package com.retrysafe.orders.security;

import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.jboss.resteasy.reactive.RestQuery;

import io.quarkus.arc.profile.IfBuildProfile;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.jwt.build.Jwt;

/**
 * Dev mode only (the class is not even built into other profiles): signs a token with the dev
 * key pair in {@code config/dev}, so trying the API needs nothing but curl.
 */
@IfBuildProfile("dev")
@Path("/dev/token")
public class DevTokenResource {

    @GET
    @Blocking
    @Produces(MediaType.TEXT_PLAIN)
    public String token(@RestQuery String sub, @RestQuery String groups) {
        Set<String> groupSet = groups == null || groups.isBlank() ? Set.of()
                : Arrays.stream(groups.split(",")).map(String::trim).filter(g -> !g.isEmpty())
                        .collect(Collectors.toSet());
        return Jwt.subject(sub == null || sub.isBlank() ? "1" : sub)
                .groups(groupSet)
                .expiresIn(Duration.ofHours(12))
                .sign();
    }
}
