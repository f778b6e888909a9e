package com.retrysafe.orders.client;

/**
 * One row of the retry table: an HTTP status, and the problem type it must carry (null: any body),
 * that is retried with the same key for {@code reason}.
 */
public record RetryableAnswer(int status, String problemType, RetryReason reason) {

    boolean matches(Answer.Http answer) {
        return answer.status() == status && (problemType == null || problemType.equals(answer.problemType()));
    }
}
