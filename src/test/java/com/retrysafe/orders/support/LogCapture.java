package com.retrysafe.orders.support;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.jboss.logmanager.ExtLogRecord;

/**
 * The records one logger writes while open, each with the MDC it was written with: what the JSON
 * format (prod) prints under "mdc".
 */
public final class LogCapture extends Handler implements AutoCloseable {

    public record Line(Level level, String message, Map<String, String> mdc) {
    }

    private final Logger logger;
    private final List<Line> lines = new CopyOnWriteArrayList<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
    }

    public static LogCapture of(Class<?> source) {
        LogCapture capture = new LogCapture(Logger.getLogger(source.getName()));
        capture.logger.addHandler(capture);
        return capture;
    }

    public List<Line> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void publish(LogRecord record) {
        Map<String, String> mdc = record instanceof ExtLogRecord ext ? ext.getMdcCopy() : Map.of();
        String message = record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
        lines.add(new Line(record.getLevel(), message, Map.copyOf(mdc)));
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
