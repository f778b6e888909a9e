package com.retrysafe.orders.web;

/** Client-facing details for errors raised by the HTTP stack rather than by our own code. */
final class WebProblems {

    private WebProblems() {
    }

    static String detailFor(int status) {
        return switch (status) {
            case 400 -> "The request is malformed";
            case 401 -> "The bearer token is missing, expired or invalid";
            case 403 -> "This operation needs a role the caller lacks";
            case 404 -> "No such resource";
            case 405 -> "This method is not allowed on this resource";
            case 406 -> "This resource can only answer with application/json";
            case 413 -> "The request body is too large";
            case 415 -> "The body must be application/json";
            case 503 -> "The service is temporarily unavailable";
            default -> status >= 500 ? "An unexpected error occurred" : "The request cannot be served";
        };
    }
}
