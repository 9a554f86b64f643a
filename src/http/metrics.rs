//! Prometheus metrics in the text exposition format: requests, latencies, the pool, the cache, nodes.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::AppState;

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 12] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0];

#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }
}

/// The server's counters. Route labels come from the router's matched paths, so their number is bounded.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    pub ws_connections: AtomicI64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Metrics {
    pub fn record(&self, route: &str, status: u16, elapsed: Duration) {
        *lock(&self.requests).entry((route.to_string(), status)).or_default() += 1;
        lock(&self.latency).entry(route.to_string()).or_default().observe(elapsed.as_secs_f64());
    }

    /// The exposition text, with the pool's and the store's figures read now.
    pub fn render(&self, state: &AppState) -> String {
        let mut out = String::with_capacity(4096);
        let pool = state.pool().stats();
        let analysis = state.analysis.counters();
        let store = state.store.stats();
        let _ = writeln!(out, "# HELP kibitz_http_requests_total HTTP requests by route and status.");
        let _ = writeln!(out, "# TYPE kibitz_http_requests_total counter");
        for ((route, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(out, "kibitz_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP kibitz_http_request_duration_seconds HTTP request latency by route.");
        let _ = writeln!(out, "# TYPE kibitz_http_request_duration_seconds histogram");
        for (route, h) in lock(&self.latency).iter() {
            for (bound, n) in BUCKETS.iter().zip(h.counts.iter()) {
                let _ = writeln!(
                    out,
                    "kibitz_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "kibitz_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "kibitz_http_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum);
            let _ = writeln!(out, "kibitz_http_request_duration_seconds_count{{route=\"{route}\"}} {}", h.count);
        }
        let gauges: [(&str, &str, &str, u64); 11] = [
            ("kibitz_pool_workers", "gauge", "Search worker threads.", pool.workers as u64),
            ("kibitz_pool_busy_workers", "gauge", "Workers running a search.", pool.busy as u64),
            ("kibitz_pool_queue_depth", "gauge", "Searches waiting for a worker.", pool.queued as u64),
            (
                "kibitz_pool_paused_searches",
                "gauge",
                "Endless searches waiting for their next turn on a worker.",
                pool.paused as u64,
            ),
            ("kibitz_pool_queue_capacity", "gauge", "Searches that may wait.", pool.capacity as u64),
            ("kibitz_searches_completed_total", "counter", "Searches finished by the pool.", pool.completed),
            ("kibitz_nodes_searched_total", "counter", "Nodes searched by the pool.", pool.nodes),
            ("kibitz_cache_hits_total", "counter", "Analyses answered from the cache.", self.get(&analysis.cache_hits)),
            (
                "kibitz_cache_misses_total",
                "counter",
                "Analyses the cache could not answer.",
                self.get(&analysis.cache_misses),
            ),
            (
                "kibitz_searches_started_total",
                "counter",
                "Searches started by the analysis path (shared ones count once).",
                self.get(&analysis.searches),
            ),
            (
                "kibitz_searches_shared_total",
                "counter",
                "Requests that joined a search already running.",
                self.get(&analysis.shared),
            ),
        ];
        for (name, kind, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
        let store_figures: [(&str, &str, u64); 4] = [
            ("kibitz_store_hits_total", "Cache lookups found in the store.", store.hits),
            ("kibitz_store_memory_hits_total", "Of those, answered from memory.", store.memory_hits),
            ("kibitz_store_misses_total", "Cache lookups not found.", store.misses),
            ("kibitz_store_writes_total", "Results written to the store.", store.writes),
        ];
        for (name, help, value) in store_figures {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}");
        }
        let engines = state.analysis.engines().list();
        if !engines.is_empty() {
            let figures: [(&str, &str, EngineFigure); 4] = [
                ("kibitz_engine_searches_total", "Searches answered by each external engine.", |s| &s.searches),
                ("kibitz_engine_failures_total", "External engine failures (the process was killed).", |s| &s.failures),
                ("kibitz_engine_restarts_total", "External engine processes restarted after a failure.", |s| {
                    &s.restarts
                }),
                ("kibitz_engine_processes_started_total", "External engine processes started.", |s| &s.started),
            ];
            for (name, help, field) in figures {
                let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
                for e in engines {
                    let value = field(&e.stats).load(Ordering::Relaxed);
                    let _ = writeln!(out, "{name}{{engine=\"{}\",game=\"{}\"}} {value}", e.name, e.game);
                }
            }
        }
        let ws = self.ws_connections.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP kibitz_websocket_connections Open WebSocket connections.\n# TYPE kibitz_websocket_connections gauge\nkibitz_websocket_connections {ws}"
        );
        out
    }

    fn get(&self, c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Reads one counter of an external engine.
type EngineFigure = fn(&crate::engines::EngineStats) -> &AtomicU64;

/// Middleware: count every request and time it, labelled with its route.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let start = Instant::now();
    let response = next.run(request).await;
    state.metrics.record(&route, response.status().as_u16(), start.elapsed());
    response
}
