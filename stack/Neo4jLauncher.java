import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.api.procedure.GlobalProcedures;
import org.neo4j.kernel.impl.transaction.log.checkpoint.CheckPointer;
import org.neo4j.kernel.impl.transaction.log.checkpoint.SimpleTriggerInfo;
import org.neo4j.kernel.internal.GraphDatabaseAPI;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Procedure;

/**
 * Minimal local Neo4j 5.26 Community server (embedded DBMS + Bolt) for dev/test.
 *
 * Usage: java -cp '.stack/lib/launcher:.stack/lib/neo4j/*' Neo4jLauncher <homeDir> [boltPort] [logsDir]
 * Env:   STACK_NEO4J_BOLT_PORT (default 7687), STACK_NEO4J_PAGECACHE_MB (default 512),
 *        STACK_NEO4J_MIN_REPLAN_SECONDS (default 600).
 * Prints "NEO4J READY bolt://127.0.0.1:<port>" once the default database is available.
 * Adds one procedure, `CALL stack.checkpoint()` (see {@link Checkpoint}).
 * SIGTERM/SIGINT -> clean DBMS shutdown via shutdown hook.
 */
public final class Neo4jLauncher {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Neo4jLauncher <homeDir> [boltPort] [logsDir]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        Files.createDirectories(home);
        int port = Integer.parseInt(args.length > 1 ? args[1] : env("STACK_NEO4J_BOLT_PORT", "7687"));
        Path logs = args.length > 2 ? Path.of(args[2]).toAbsolutePath() : home.resolve("logs");
        long pageCacheMb = Long.parseLong(env("STACK_NEO4J_PAGECACHE_MB", "512"));
        long replanSeconds = Long.parseLong(env("STACK_NEO4J_MIN_REPLAN_SECONDS", "600"));

        long t0 = System.nanoTime();
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.logs_directory, logs) // debug.log, query.log, ...
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false) // dbms.usage_report.enabled
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
                // A growing graph moves the planner's statistics, and every cached plan older than this is
                // recompiled when they moved: 100-460 ms of CPU for Muninn's larger statements, half of
                // Neo4j's statement time while a bench filled new tenants (default 10s).
                .setConfig(GraphDatabaseSettings.cypher_min_replan_interval, Duration.ofSeconds(replanSeconds))
                // dev-sized transaction logs: no 256MB preallocation, prune aggressively
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(32))
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "64M size")
                .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofSeconds(5))
                // Bolt shutdown otherwise idles ~10s in Netty quiet periods / pool waits
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J STOPPING");
            try {
                dbms.shutdown();
            } catch (Throwable t) {
                t.printStackTrace();
            }
            System.out.println("NEO4J STOPPED");
            System.out.flush();
            stopped.countDown();
        }, "neo4j-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        while (!db.isAvailable(1000)) {
            // wait for the default database to come online
        }
        var deps = ((GraphDatabaseAPI) db).getDependencyResolver();
        Checkpoint.checkPointer = deps.resolveDependency(CheckPointer.class);
        deps.resolveDependency(GlobalProcedures.class).registerProcedure(Checkpoint.class);
        System.out.printf("NEO4J READY bolt://127.0.0.1:%d (%d ms)%n", port, (System.nanoTime() - t0) / 1_000_000);
        System.out.flush();
        stopped.await();
    }

    /**
     * Community Neo4j has no checkpoint procedure, and its scheduler checkpoints every 15 minutes. A
     * checkpoint writes the pages a transaction changed to the store files, and Community has no secure
     * delete: a value overwritten after a checkpoint stays in freed store records until they are reused.
     * So a test that proves an erasure leaves no plaintext outside the transaction log (test/e2e/erasure)
     * holds only if no checkpoint falls between its writes and its scan. It calls this first: a checkpoint
     * now moves the scheduler's next one 15 minutes on.
     */
    public static final class Checkpoint {
        static volatile CheckPointer checkPointer;

        public static final class Output {
            public long transactionId;

            Output(long transactionId) {
                this.transactionId = transactionId;
            }
        }

        @Procedure(name = "stack.checkpoint", mode = Mode.DBMS)
        @Description("Checkpoints the default database now (the local stack's launcher only).")
        public Stream<Output> checkpoint() throws java.io.IOException {
            return Stream.of(new Output(checkPointer.forceCheckPoint(new SimpleTriggerInfo("stack.checkpoint()"))));
        }
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v.trim();
    }
}
