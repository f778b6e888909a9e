package com.retrysafe.orders.ops;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

/**
 * API.md section 6 and docs/OPERATIONS.md: /q/info names the build (its version, its git commit)
 * and nothing of the OS or the JVM it runs on.
 */
@QuarkusTest
class BuildInfoTest {

    @Test
    void infoNamesTheBuildAndItsCommitAndNothingOfTheOsOrTheJvm() {
        JsonPath info = given().when().get("/q/info").then().statusCode(200).extract().jsonPath();
        Map<String, Object> sections = info.getMap("");

        assertTrue(info.getString("build.version").matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?"),
                "the pom.xml version: " + sections);
        assertTrue(info.getString("git.commit.id").matches("[0-9a-f]{7,40}"),
                "the commit it was built from: " + sections);
        assertFalse(sections.containsKey("os"), "nothing of the OS: " + sections);
        assertFalse(sections.containsKey("java"), "nothing of the JVM: " + sections);
        assertEquals(Set.of("build", "git"), sections.keySet(), "only the build and its commit");
    }
}
