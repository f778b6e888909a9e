package com.retrysafe.orders.ops;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough PromQL to list the series selectors of an expression: each metric name with its label
 * matchers. Not a parser: it removes what cannot name a metric (strings, ranges, grouping clauses,
 * Grafana variables) and takes every remaining identifier that is not a function call or a keyword.
 */
final class PromQl {

    record LabelMatcher(String label, String op, String value) {
    }

    record Selector(String metric, List<LabelMatcher> matchers) {

        LabelMatcher matcher(String label) {
            return matchers.stream().filter(m -> m.label().equals(label)).findFirst().orElse(null);
        }
    }

    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "by", "without", "on", "ignoring",
            "group_left", "group_right", "offset", "bool", "inf", "nan");

    private static final Pattern LABEL_MATCHER = Pattern
            .compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'");
    private static final Pattern RANGE = Pattern.compile("\\[[^\\]]*\\]");
    private static final Pattern GROUPING = Pattern
            .compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{[^}]*\\}|\\$\\w+");
    // Not after a word character, '.' or ':' so that 0.99, 1e3 and the 1d of "offset 1d" are no names.
    private static final Pattern IDENTIFIER = Pattern.compile("(?<![A-Za-z0-9_.:])[a-zA-Z_:][a-zA-Z0-9_:]*");
    // Where a {...} block stood; no identifier can start with the control characters around its index.
    private static final Pattern BLOCK_REF = Pattern.compile("^\\s*\u0001(\\d+)\u0002");

    private PromQl() {
    }

    static List<Selector> selectors(String expression) {
        List<List<LabelMatcher>> blocks = new ArrayList<>();
        String text = cutLabelBlocks(expression, blocks);
        text = STRING.matcher(text).replaceAll(" ");
        text = RANGE.matcher(text).replaceAll(" ");
        text = GROUPING.matcher(text).replaceAll(" ");
        text = VARIABLE.matcher(text).replaceAll(" ");

        List<Selector> selectors = new ArrayList<>();
        Matcher identifier = IDENTIFIER.matcher(text);
        while (identifier.find()) {
            String name = identifier.group();
            String rest = text.substring(identifier.end());
            if (KEYWORDS.contains(name.toLowerCase()) || rest.stripLeading().startsWith("(")) {
                continue;
            }
            Matcher block = BLOCK_REF.matcher(rest);
            List<LabelMatcher> matchers = block.find() ? blocks.get(Integer.parseInt(block.group(1))) : List.of();
            selectors.add(new Selector(name, matchers));
        }
        return selectors;
    }

    /** Replaces every {...} (outside strings) by a reference to its parsed matchers. */
    private static String cutLabelBlocks(String expression, List<List<LabelMatcher>> blocks) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < expression.length()) {
            char c = expression.charAt(i);
            if (c == '"') {
                int end = endOfString(expression, i);
                out.append(expression, i, end);
                i = end;
            } else if (c == '{') {
                int end = i + 1;
                while (end < expression.length() && expression.charAt(end) != '}') {
                    end = expression.charAt(end) == '"' ? endOfString(expression, end) : end + 1;
                }
                if (end >= expression.length()) {
                    throw new IllegalArgumentException("Unclosed { in " + expression);
                }
                List<LabelMatcher> matchers = new ArrayList<>();
                Matcher m = LABEL_MATCHER.matcher(expression.substring(i + 1, end));
                while (m.find()) {
                    matchers.add(new LabelMatcher(m.group(1), m.group(2), m.group(3)));
                }
                out.append('\u0001').append(blocks.size()).append('\u0002');
                blocks.add(matchers);
                i = end + 1;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static int endOfString(String text, int openingQuote) {
        int i = openingQuote + 1;
        while (i < text.length() && text.charAt(i) != '"') {
            i += text.charAt(i) == '\\' ? 2 : 1;
        }
        if (i >= text.length()) {
            throw new IllegalArgumentException("Unclosed string in " + text);
        }
        return i + 1;
    }
}
