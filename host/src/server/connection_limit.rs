//! Connections near the open-files limit. Every accepted connection holds a descriptor, and a
//! client can open idle ones until `accept` fails (`EMFILE`): Go's server — kube-apiserver's —
//! then retries accepting, and health probes and real requests wait behind the idle
//! connections until their idle timeout. Here the connections are counted against the limit
//! less a reserve for what else the process opens (storage, logs, plugins); past that, or when
//! `accept` fails for want of descriptors, the connections idle longest — no request in
//! flight — are closed first, so a new connection (a probe, a real client) is served.
//!
//! A connection is idle between requests, including before its first request and while a
//! request head is still arriving (hyper reads heads before anything here sees them); one
//! with a request in flight (until its answer's body is written) is never closed here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Descriptors kept for everything but client connections.
pub const RESERVED_DESCRIPTORS: u64 = 128;

/// The fewest connections allowed whatever the limit.
const MIN_CONNECTIONS: usize = 64;

/// One accepted connection, as the table sees it.
#[derive(Debug)]
pub struct Connection {
    in_flight: AtomicUsize,
    /// Milliseconds since the table's start of the last request's start or end.
    last_active: AtomicU64,
    close: tokio::sync::Notify,
    epoch: Instant,
}

impl Connection {
    fn touch(&self) {
        self.last_active
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Count a request from now until the returned guard drops (with its answer's body).
    pub fn request_started(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.touch();
        RequestGuard(self.clone())
    }

    /// Whether no request is in flight on it.
    pub fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    /// Completes when the table closes this connection to make room.
    pub async fn closed(&self) {
        self.close.notified().await
    }
}

/// A request in flight on a [`Connection`].
#[derive(Debug)]
pub struct RequestGuard(Arc<Connection>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The open connections of a server (both ports), and how many may be open.
#[derive(Debug)]
pub struct Connections {
    table: Mutex<HashMap<u64, Arc<Connection>>>,
    next_id: AtomicU64,
    max: usize,
    epoch: Instant,
    closed_for_room: AtomicU64,
}

/// A connection's place in the table, given up when dropped.
pub struct Registered {
    table: Arc<Connections>,
    id: u64,
    /// The connection.
    pub connection: Arc<Connection>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.table.table.lock().unwrap().remove(&self.id);
    }
}

impl Connections {
    /// A table for a process allowed `open_files_limit` descriptors.
    pub fn new(open_files_limit: u64) -> Arc<Connections> {
        let max = open_files_limit.saturating_sub(RESERVED_DESCRIPTORS) as usize;
        Arc::new(Connections {
            table: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            max: max.max(MIN_CONNECTIONS),
            epoch: Instant::now(),
            closed_for_room: AtomicU64::new(0),
        })
    }

    /// Register a new connection; when that makes more than allowed, close the connections
    /// idle longest to make room.
    pub fn register(self: &Arc<Self>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            in_flight: AtomicUsize::new(0),
            last_active: AtomicU64::new(0),
            close: tokio::sync::Notify::new(),
            epoch: self.epoch,
        });
        connection.touch();
        let over = {
            let mut t = self.table.lock().unwrap();
            t.insert(id, connection.clone());
            t.len().saturating_sub(self.max)
        };
        if over > 0 {
            self.make_room(over);
        }
        Registered {
            table: self.clone(),
            id,
            connection,
        }
    }

    /// Close up to `n` connections with no request in flight, those idle longest first.
    /// Returns how many were told to close.
    pub fn make_room(&self, n: usize) -> usize {
        let mut idle: Vec<(u64, Arc<Connection>)> = self
            .table
            .lock()
            .unwrap()
            .values()
            .filter(|c| c.in_flight.load(Ordering::Acquire) == 0)
            .map(|c| (c.last_active.load(Ordering::Relaxed), c.clone()))
            .collect();
        idle.sort_by_key(|(at, _)| *at);
        let closing = idle.len().min(n);
        for (_, c) in idle.into_iter().take(closing) {
            c.close.notify_one();
        }
        if closing > 0 {
            let total = self
                .closed_for_room
                .fetch_add(closing as u64, Ordering::Relaxed)
                + closing as u64;
            tracing::debug!(closing, total, "closed idle connections to make room");
        }
        closing
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.table.lock().unwrap().len()
    }

    /// How many may be open.
    pub fn max(&self) -> usize {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_longest_idle_connections_are_closed_first_and_busy_ones_never() {
        let table = Connections::new(RESERVED_DESCRIPTORS + MIN_CONNECTIONS as u64);
        assert_eq!(table.max(), MIN_CONNECTIONS);
        let mut conns: Vec<Registered> = (0..MIN_CONNECTIONS).map(|_| table.register()).collect();
        // The oldest is busy: it is skipped.
        let busy = conns[0].connection.request_started();
        std::thread::sleep(std::time::Duration::from_millis(5));
        for c in &conns[2..] {
            drop(c.connection.request_started());
        }
        let closed_second = conns[1].connection.clone();
        let waiting = tokio::spawn(async move { closed_second.closed().await });
        let extra = table.register();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("the connection idle longest is told to close")
            .unwrap();
        assert_eq!(table.open(), MIN_CONNECTIONS + 1);
        drop(conns.remove(1));
        assert_eq!(table.open(), MIN_CONNECTIONS);
        drop((busy, extra));
    }
}
