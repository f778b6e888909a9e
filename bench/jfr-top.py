#!/usr/bin/env python3
"""Where a JFR recording's CPU samples go: by part of the stack, and the top frames.

    jfr-top.py RECORDING.jfr [JAVA_HOME]

Reads jdk.ExecutionSample (stacks 96 deep) with the JDK's jfr tool. A sample counts for the first
part (in the order below) whose pattern is anywhere in its stack, so the parts add up to 100 %.
"""
import collections
import re
import subprocess
import sys

PARTS = [  # (part, pattern in any frame of the stack)
    ("outbox relay: publishing to the broker", r"rabbitmq|OutboxRelay|OutboxPublisher|reactive\.messaging"),
    ("tracing (OpenTelemetry)", r"opentelemetry"),
    ("request log line", r"IdempotencyService\.report"),
    ("PostgreSQL client", r"pgclient|sqlclient"),
    ("JWT", r"jwt|VerifiedTokenCache"),
    ("bean validation", r"hibernate\.validator"),
    ("HTTP response write", r"VertxOutputStream|AbstractResponseWrapper\.end"),
    ("JSON (Jackson)", r"jackson"),
    ("metrics (Micrometer)", r"micrometer"),
    ("fingerprint", r"Fingerprint"),
    ("HTTP codec", r"netty\.handler\.codec\.http|Http1x"),
    ("RESTEasy Reactive", r"resteasy"),
    ("Mutiny and context propagation", r"smallrye\.context|mutiny"),
    ("Netty I/O", r"netty"),
]


def main():
    recording = sys.argv[1]
    java_home = sys.argv[2] if len(sys.argv) > 2 else "/usr/lib/jvm/temurin-25-jdk-amd64"
    text = subprocess.run([java_home + "/bin/jfr", "print", "--stack-depth", "96", "--events",
                           "jdk.ExecutionSample", recording], check=True, capture_output=True, text=True).stdout
    parts, self_frames, app_frames = collections.Counter(), collections.Counter(), collections.Counter()
    samples = 0
    for event in text.split("jdk.ExecutionSample")[1:]:
        frames = [f for f in re.findall(r"^\s+([\w$.<>/]+)\(", event, re.M) if "." in f]
        if not frames:
            continue
        samples += 1
        stack = " ".join(frames)
        parts[next((name for name, pattern in PARTS if re.search(pattern, stack)), "other")] += 1
        self_frames[frames[0]] += 1
        for frame in set(frames):
            if frame.startswith("com.retrysafe.") and "_ClientProxy" not in frame and "_Subclass" not in frame:
                app_frames[frame] += 1
    if samples == 0:
        sys.exit("no execution samples in " + recording)
    print(f"{samples} samples")
    print("by part of the stack:")
    for name, count in parts.most_common():
        print(f"  {count * 100 / samples:5.1f} %  {name}")
    print("top frames (self):")
    for frame, count in self_frames.most_common(12):
        print(f"  {count * 100 / samples:5.1f} %  {frame}")
    print("our frames (inclusive):")
    for frame, count in app_frames.most_common(10):
        print(f"  {count * 100 / samples:5.1f} %  {frame}")


if __name__ == "__main__":
    main()
