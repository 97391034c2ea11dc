import OrbitPostgres
import Prometheus
import Synchronization

/// Prometheus metrics of the API: requests by route, method and status, their latencies by
/// route, and the connection pool's use. Served at `/metrics`.
package final class APIMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "orbit", subsystem: "http", metricName: "requests", unitName: "total",
            helpText: "HTTP requests by route template, method and status."
        )
    }
    private static var latency: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "orbit", subsystem: "http", metricName: "request_duration", unitName: "seconds",
            helpText: "HTTP request latency by route template and method."
        )
    }
    private let buckets: [Duration] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500].map { .milliseconds($0) }
    private let inFlight = Atomic<Int>(0)

    /// The series of a route, method and status, once looked up: the registry builds and
    /// hashes the label set on every lookup, a cost every request paid.
    private struct SeriesKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }
    private let series = Mutex<[SeriesKey: (requests: Counter, latency: DurationHistogram)]>([:])

    package init() {}

    /// A request has begun (its head arrived); `requestEnded` when its response is ready.
    func requestStarted() { inFlight.add(1, ordering: .relaxed) }
    func requestEnded() { inFlight.subtract(1, ordering: .relaxed) }

    func record(method: String, route: String, status: Int, duration: Duration) {
        let key = SeriesKey(route: route, method: method, status: status)
        let (requests, latency) = series.withLock { series in
            if let known = series[key] { return known }
            let made = (
                registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("method", method), ("status", String(status))]),
                registry.makeDurationHistogram(descriptor: Self.latency, labels: [("route", route), ("method", method)], buckets: buckets)
            )
            series[key] = made
            return made
        }
        requests.increment()
        latency.record(duration)
    }

    /// The exposition text, with the pool's current state.
    func render(pool: ConnectionPool) -> String {
        let statistics = pool.statistics
        let gauge = { (name: String, help: String, value: Int) in
            self.registry.makeGauge(
                descriptor: MetricNameDescriptor(namespace: "orbit", subsystem: "pool", metricName: name, unitName: "connections", helpText: help)
            ).set(Double(value))
        }
        gauge("open", "Database connections open or being opened.", statistics.open)
        gauge("idle", "Database connections idle in the pool.", statistics.idle)
        gauge("in_use", "Database connections lent to requests.", statistics.open - statistics.idle)
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "orbit", subsystem: "pool", metricName: "waiting", unitName: "tasks",
                helpText: "Requests waiting for a database connection."
            )
        ).set(Double(statistics.waiting))
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "orbit", subsystem: "http", metricName: "requests_in_flight", unitName: nil,
                helpText: "Requests begun and not yet answered (this scrape included)."
            )
        ).set(Double(inFlight.load(ordering: .relaxed)))
        return registry.emitToString()
    }
}
