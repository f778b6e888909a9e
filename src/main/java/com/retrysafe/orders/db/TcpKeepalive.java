package com.retrysafe.orders.db;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.socket.nio.NioChannelOption;
import io.vertx.sqlclient.SqlConnection;
import jdk.net.ExtendedSocketOptions;

/**
 * The keepalive timers of a pooled connection: the first probe after {@code idle} without
 * traffic, then one every {@code interval}; {@code probes} unanswered ones end the connection.
 * <p>
 * Vert.x 4 applies these to the sockets of servers only: a client's connection gets SO_KEEPALIVE
 * and the kernel's timers (two hours on Linux), on either transport. So they are set on each
 * connection as the pool opens it, on its socket: with the native epoll transport's options, or
 * with the JDK's extended socket options (Linux, macOS) on the JDK transport.
 */
public record TcpKeepalive(int idleSeconds, int intervalSeconds, int probes) {

    private static final Logger LOG = Logger.getLogger(TcpKeepalive.class);
    private static final int PROBES = 3;
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    /** The first probe after {@code idle}, then one every third of it, three in all. */
    public static TcpKeepalive of(Duration idle) {
        int idleSeconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE / 4, idle.toSeconds()));
        return new TcpKeepalive(idleSeconds, Math.max(1, idleSeconds / PROBES), PROBES);
    }

    /** How long after its last answer a connection to a host that went silent is ended. */
    public Duration detection() {
        return Duration.ofSeconds(idleSeconds + (long) intervalSeconds * probes);
    }

    /** Sets the timers on a connection the pool has just opened (from its connect handler). */
    public void applyTo(SqlConnection connection) {
        apply(ConnectionDiscard.channelOf(connection));
    }

    void apply(Channel channel) {
        if (channel == null) {
            warnOnce("its socket cannot be reached");
            return;
        }
        boolean set;
        try {
            // Only a native epoll socket knows (and answers) the epoll option.
            set = channel.config().getOption(EpollChannelOption.TCP_KEEPIDLE) != null
                    ? set(channel, EpollChannelOption.TCP_KEEPIDLE, EpollChannelOption.TCP_KEEPINTVL,
                            EpollChannelOption.TCP_KEEPCNT)
                    : set(channel, NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE),
                            NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL),
                            NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT));
        } catch (RuntimeException | LinkageError unsupported) {
            warnOnce(unsupported.toString());
            return;
        }
        if (!set) {
            warnOnce("the " + channel.getClass().getSimpleName() + " socket does not take them");
        }
    }

    private boolean set(Channel channel, ChannelOption<Integer> idle, ChannelOption<Integer> interval,
            ChannelOption<Integer> count) {
        // Each call is a setsockopt on the socket: nothing blocks.
        return channel.config().setOption(idle, idleSeconds)
                & channel.config().setOption(interval, intervalSeconds)
                & channel.config().setOption(count, probes);
    }

    private void warnOnce(String why) {
        if (WARNED.compareAndSet(false, true)) {
            LOG.warnf("TCP keepalive timers not set on the database connections (%s): the operating system's"
                    + " defaults hold (Linux: first probe after 2 hours); a partitioned database host is then"
                    + " noticed on an idle connection only when a request's deadline closes it", why);
        }
    }
}
