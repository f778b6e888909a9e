package com.retrysafe.orders.faults;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * HTTP/1.1 over a plain socket, so a test can send what no HTTP client library would: CR and LF
 * inside a header, control bytes, a header twice, an oversized header block.
 */
final class RawHttp {

    record Header(String name, byte[] value) {

        static Header of(String name, String value) {
            return new Header(name, value.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** {@code status} 0: the connection closed, or timed out, without a status line. */
    record Response(int status, List<String> headers, String body, long millis) {

        String header(String name) {
            String prefix = name.toLowerCase(Locale.ROOT) + ":";
            for (String header : headers) {
                if (header.toLowerCase(Locale.ROOT).startsWith(prefix)) {
                    return header.substring(prefix.length()).trim();
                }
            }
            return null;
        }
    }

    private RawHttp() {
    }

    static Response post(int port, String path, List<Header> headers, byte[] body) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        for (Header header : headers) {
            request.write(header.name().getBytes(StandardCharsets.ISO_8859_1));
            request.write(": ".getBytes(StandardCharsets.ISO_8859_1));
            request.write(header.value());
            request.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        }
        if (body != null) {
            request.write(("Content-Length: " + body.length + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        }
        request.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        if (body != null) {
            request.write(body);
        }
        long start = System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 3_000);
            socket.setSoTimeout(15_000);
            OutputStream out = socket.getOutputStream();
            try {
                out.write(request.toByteArray());
                out.flush();
            } catch (IOException closedEarly) {
                // The server may answer and close before reading a large request: read what it said.
            }
            byte[] raw = readAll(socket.getInputStream());
            return parse(raw, (System.nanoTime() - start) / 1_000_000);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) >= 0;) {
                bytes.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException | java.net.SocketException stopped) {
            // whatever arrived is the answer
        }
        return bytes.toByteArray();
    }

    private static Response parse(byte[] raw, long millis) {
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (!text.startsWith("HTTP/1.1 ") || end < 0) {
            return new Response(0, List.of(), text, millis);
        }
        String[] lines = text.substring(0, end).split("\r\n");
        int status = Integer.parseInt(lines[0].substring(9, 12));
        List<String> headers = new ArrayList<>(List.of(lines).subList(1, lines.length));
        byte[] rest = text.substring(end + 4).getBytes(StandardCharsets.ISO_8859_1);
        Response head = new Response(status, headers, "", millis);
        if ("chunked".equalsIgnoreCase(head.header("Transfer-Encoding"))) {
            rest = dechunk(rest);
        }
        return new Response(status, headers, new String(rest, StandardCharsets.UTF_8), millis);
    }

    private static byte[] dechunk(byte[] chunked) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        String text = new String(chunked, StandardCharsets.ISO_8859_1);
        int at = 0;
        while (at < text.length()) {
            int lineEnd = text.indexOf("\r\n", at);
            if (lineEnd < 0) {
                break;
            }
            int size = Integer.parseInt(text.substring(at, lineEnd).split(";")[0].trim(), 16);
            if (size == 0) {
                break;
            }
            body.write(chunked, lineEnd + 2, size);
            at = lineEnd + 2 + size + 2;
        }
        return body.toByteArray();
    }
}
