//! `--live`: a full-screen view of the run (ratatui on crossterm), drawn by its own thread
//! from the live samples and the threads' published progress: per job its state, the last
//! interval's IOPS, bandwidth and latency percentiles, sparklines of IOPS and bandwidth,
//! progress and errors, with the run's elapsed time and ETA. `q`, Esc or Ctrl-C stop the
//! run as its runtime ending would; the final report follows on the normal screen.

use super::JobInterval;
use flexio_analysis::fmt::{bw, count, ns};
use flexio_run::plan::ThreadPlan;
use flexio_run::progress::Progress;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Sparkline};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Intervals kept for the sparklines.
const HISTORY: usize = 240;

#[derive(Clone, Debug, Default)]
struct Row {
    name: String,
    thread: u32,
    iops: VecDeque<u64>,
    bw: VecDeque<u64>,
    last_iops: f64,
    last_bw: f64,
    /// The last interval's p50, p99 and p99.9 (ns), when it completed I/Os.
    pct: Option<[u64; 3]>,
    errors: u64,
    /// The size the job moves (bytes, over its loops), or its runtime (s), for progress.
    total_bytes: Option<u64>,
    runtime_s: Option<u64>,
    ended: bool,
}

#[derive(Default)]
struct State {
    rows: Vec<Row>,
    elapsed_ms: u64,
    eta_s: Option<u64>,
    stopping: bool,
}

pub struct View {
    state: Arc<Mutex<State>>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl View {
    pub fn start(
        plans: &[ThreadPlan],
        progress: Arc<Vec<Progress>>,
        terminate: Arc<AtomicBool>,
    ) -> View {
        let rows = plans
            .iter()
            .map(|p| {
                let budget = p.io.budget;
                Row {
                    name: p.name.clone(),
                    thread: p.thread_number,
                    total_bytes: (budget != u64::MAX)
                        .then(|| budget.saturating_mul(p.io.loops as u64)),
                    runtime_s: p.control.time_limit_us.map(|us| us / 1_000_000),
                    ..Row::default()
                }
            })
            .collect();
        let state = Arc::new(Mutex::new(State {
            rows,
            ..State::default()
        }));
        let done = Arc::new(AtomicBool::new(false));
        let (s2, d2) = (state.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("flexio-live".into())
            .spawn(move || draw_loop(s2, progress, d2, terminate))
            .ok();
        View {
            state,
            done,
            thread,
        }
    }

    /// A sample's intervals.
    pub fn update(&self, ivs: &[JobInterval], elapsed_ms: u64, eta_s: Option<u64>) {
        let Ok(mut s) = self.state.lock() else { return };
        s.elapsed_ms = elapsed_ms;
        s.eta_s = eta_s;
        for iv in ivs {
            let Some(row) = s
                .rows
                .iter_mut()
                .find(|r| r.thread == iv.plan.thread_number)
            else {
                continue;
            };
            let secs = iv.ms as f64 / 1000.0;
            let (mut ios, mut bytes) = (0u64, 0u64);
            let mut hist = flexio_stats::Hist::enabled();
            for d in &iv.delta.dirs {
                ios += d.ios;
                bytes += d.bytes;
                hist.merge(&d.to_hist());
            }
            if secs > 0.0 {
                row.last_iops = ios as f64 / secs;
                row.last_bw = bytes as f64 / secs;
            }
            push(&mut row.iops, row.last_iops as u64);
            push(&mut row.bw, row.last_bw as u64);
            let n = hist.total();
            row.pct = (n > 0).then(|| {
                let p = hist.percentiles(&[50.0, 99.0, 99.9], n);
                [p[0].1, p[1].1, p[2].1]
            });
            row.errors = iv.result.stats.total_err;
            row.ended |= iv.last;
        }
    }

    /// Stop drawing and give the terminal back.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn push(q: &mut VecDeque<u64>, v: u64) {
    if q.len() == HISTORY {
        q.pop_front();
    }
    q.push_back(v);
}

fn draw_loop(
    state: Arc<Mutex<State>>,
    progress: Arc<Vec<Progress>>,
    done: Arc<AtomicBool>,
    terminate: Arc<AtomicBool>,
) {
    let Ok(mut term) = ratatui::try_init() else {
        return;
    };
    while !done.load(Ordering::Relaxed) {
        if let Ok(s) = state.lock() {
            let _ = term.draw(|f| draw(f, &s, &progress));
        }
        if event::poll(Duration::from_millis(200)).unwrap_or(false) {
            if let Ok(Event::Key(k)) = event::read() {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                if k.kind != KeyEventKind::Release
                    && (ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc))
                {
                    terminate.store(true, Ordering::Relaxed);
                    if let Ok(mut s) = state.lock() {
                        s.stopping = true;
                    }
                }
            }
        }
    }
    ratatui::restore();
}

fn hms(s: u64) -> String {
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn draw(f: &mut ratatui::Frame, s: &State, progress: &[Progress]) {
    let area = f.area();
    let mut head = format!(" flexio --live   elapsed {}   ", hms(s.elapsed_ms / 1000));
    match s.eta_s {
        Some(e) => head.push_str(&format!("eta {}   ", hms(e))),
        None => head.push_str("eta --   "),
    }
    head.push_str(if s.stopping {
        "stopping..."
    } else {
        "q: stop the run and print the report"
    });
    let chunks = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(1), Constraint::Min(0)])
        .split(area);
    f.render_widget(
        Paragraph::new(head).style(Style::default().add_modifier(Modifier::REVERSED)),
        chunks[0],
    );
    const H: u16 = 5;
    let fit = (chunks[1].height / H).max(1) as usize;
    let shown = s.rows.len().min(fit);
    let mut cons: Vec<Constraint> = (0..shown).map(|_| Constraint::Length(H)).collect();
    cons.push(Constraint::Min(0));
    let areas = Layout::default()
        .direction(Direction::Vertical)
        .constraints(cons)
        .split(chunks[1]);
    for (k, row) in s.rows.iter().take(shown).enumerate() {
        let pr = progress.get(k);
        draw_row(f, areas[k], row, pr, s.elapsed_ms);
    }
    if s.rows.len() > shown {
        f.render_widget(
            Paragraph::new(format!(
                " ... and {} more jobs (a larger terminal shows them)",
                s.rows.len() - shown
            )),
            areas[shown],
        );
    }
}

fn draw_row(f: &mut ratatui::Frame, area: Rect, row: &Row, pr: Option<&Progress>, elapsed_ms: u64) {
    let state = pr.map(|p| p.state_char()).unwrap_or('P');
    let title = format!(" {} (thread {}) [{}] ", row.name, row.thread, state);
    let block = Block::default().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let parts = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(1), Constraint::Min(1)])
        .split(inner);
    let pct = match row.pct {
        Some([a, b, c]) => format!(
            "p50 {}  p99 {}  p99.9 {}",
            ns(a as f64),
            ns(b as f64),
            ns(c as f64)
        ),
        None => "p50 --  p99 --  p99.9 --".into(),
    };
    let mut spans = vec![
        Span::styled(
            format!("IOPS {:>8}  ", count(row.last_iops)),
            Style::default().fg(Color::Cyan),
        ),
        Span::styled(
            format!("BW {:>11}  ", bw(row.last_bw)),
            Style::default().fg(Color::Green),
        ),
        Span::raw(pct),
    ];
    if row.errors > 0 {
        spans.push(Span::styled(
            format!("  errors {}", row.errors),
            Style::default().fg(Color::Red),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), parts[0]);
    let cols = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([
            Constraint::Percentage(40),
            Constraint::Percentage(40),
            Constraint::Percentage(20),
        ])
        .split(parts[1]);
    let tail = |q: &VecDeque<u64>, w: u16| -> Vec<u64> {
        let n = q.len().saturating_sub(w as usize);
        q.iter().skip(n).copied().collect()
    };
    f.render_widget(
        Sparkline::default()
            .data(tail(&row.iops, cols[0].width))
            .style(Style::default().fg(Color::Cyan)),
        cols[0],
    );
    f.render_widget(
        Sparkline::default()
            .data(tail(&row.bw, cols[1].width))
            .style(Style::default().fg(Color::Green)),
        cols[1],
    );
    let done_bytes: u64 = pr
        .map(|p| (0..3).map(|d| p.bytes[d].load(Ordering::Relaxed)).sum())
        .unwrap_or(0);
    let by_size = row
        .total_bytes
        .filter(|t| *t > 0)
        .map(|t| done_bytes as f64 / t as f64);
    let by_time = row
        .runtime_s
        .filter(|t| *t > 0)
        .map(|t| elapsed_ms as f64 / 1000.0 / t as f64);
    let ratio = if row.ended || state == '_' {
        1.0
    } else {
        match (by_size, by_time) {
            (Some(a), Some(b)) => a.max(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => 0.0,
        }
    }
    .clamp(0.0, 1.0);
    f.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(format!("{:.0}%", ratio * 100.0))
            .gauge_style(Style::default().fg(Color::Yellow)),
        cols[2],
    );
}
