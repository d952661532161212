//! `hermes insights [--days N] [--source S]`: what the session history says
//! about use — sessions, messages, tokens and cost, models, platforms, the
//! tools called most, and when (weekdays, peak hours) — in the reference's
//! layout, over whichever store the home uses.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use hermes_state::ListFilter;
use hermes_state::store::SessionAdmin;
use hermes_state::time::UtcTime;

use crate::args::RunArgs;

/// `hermes insights` arguments.
#[derive(Debug, Args)]
pub struct InsightsArgs {
    /// How many days back (default 30).
    #[arg(long, default_value_t = 30)]
    days: u32,
    /// Only sessions from this platform (cli, telegram, api_server, …).
    #[arg(long)]
    source: Option<String>,
}

/// Sums over the period.
#[derive(Default)]
struct Totals {
    sessions: u64,
    messages: u64,
    user_messages: u64,
    tool_calls: u64,
    input: i64,
    output: i64,
    cost: f64,
    seconds: f64,
    models: BTreeMap<String, (u64, i64)>,
    platforms: BTreeMap<String, (u64, u64, i64)>,
    tools: BTreeMap<String, u64>,
    weekdays: [u64; 7],
    hours: [u64; 24],
}

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

fn bars(values: &[u64], width: usize) -> Vec<String> {
    let peak = values.iter().copied().max().unwrap_or(0).max(1);
    values
        .iter()
        .map(|v| {
            if *v == 0 {
                String::new()
            } else {
                "█".repeat(((*v as f64 / peak as f64 * width as f64) as usize).max(1))
            }
        })
        .collect()
}

fn gather(admin: &dyn SessionAdmin, since: f64, source: Option<&str>) -> Result<Totals> {
    let mut t = Totals::default();
    let listed = admin.list_sessions(&ListFilter {
        source: source.map(str::to_owned),
        limit: usize::MAX,
        include_children: true,
        ..ListFilter::default()
    })?;
    for s in listed.into_iter().filter(|s| s.started_at >= since) {
        let Some(row) = admin.session_row(&s.id)? else {
            continue;
        };
        t.sessions += 1;
        let messages = admin.messages(&s.id)?;
        t.messages += messages.len() as u64;
        t.user_messages += messages.iter().filter(|m| m.role == "user").count() as u64;
        for m in messages.iter().filter(|m| m.role == "tool") {
            t.tool_calls += 1;
            *t.tools
                .entry(m.tool_name.clone().unwrap_or_else(|| "?".into()))
                .or_default() += 1;
        }
        let tokens = row.input_tokens + row.output_tokens;
        t.input += row.input_tokens;
        t.output += row.output_tokens;
        t.cost += row
            .actual_cost_usd
            .or(row.estimated_cost_usd)
            .unwrap_or(0.0);
        let end = row.ended_at.unwrap_or(s.last_active);
        t.seconds += (end - row.started_at).max(0.0);
        let model = t
            .models
            .entry(row.model.clone().unwrap_or_else(|| "(unknown)".into()))
            .or_default();
        model.0 += 1;
        model.1 += tokens;
        let platform = t.platforms.entry(row.source.clone()).or_default();
        platform.0 += 1;
        platform.1 += messages.len() as u64;
        platform.2 += tokens;
        let at = UtcTime::from_unix(row.started_at as i64);
        // 1970-01-01 was a Thursday (index 3 from Monday).
        let weekday = ((row.started_at as i64).div_euclid(86_400) + 3).rem_euclid(7);
        t.weekdays[weekday as usize] += 1;
        t.hours[at.hour as usize] += 1;
    }
    Ok(t)
}

/// Runs `hermes insights`.
pub fn run(args: &InsightsArgs, flags: &RunArgs) -> Result<ExitCode> {
    let setup = crate::chat::load_setup(flags)?;
    let services = hermes_session::Services::new(setup);
    let Some(admin) = services.admin() else {
        anyhow::bail!(
            "{}",
            services
                .store_problem()
                .unwrap_or_else(|| "session history is off".into())
        );
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let since = now - f64::from(args.days) * 86_400.0;
    let t = gather(admin.as_ref(), since, args.source.as_deref())?;
    let mut out = std::io::stdout().lock();
    if t.sessions == 0 {
        let src = args
            .source
            .as_ref()
            .map_or_else(String::new, |s| format!(" (source: {s})"));
        writeln!(
            out,
            "  No sessions found in the last {} days{src}.",
            args.days
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    report(&mut out, args, &t)?;
    Ok(ExitCode::SUCCESS)
}

fn report(out: &mut impl Write, args: &InsightsArgs, t: &Totals) -> Result<()> {
    let mut period = format!("Last {} days", args.days);
    if let Some(s) = &args.source {
        period.push_str(&format!(" ({s})"));
    }
    let pad = 56usize.saturating_sub(period.chars().count());
    writeln!(
        out,
        "\n  ╔══════════════════════════════════════════════════════════╗"
    )?;
    writeln!(
        out,
        "  ║                    📊 Hermes Insights                    ║"
    )?;
    writeln!(
        out,
        "  ║{} {period} {}║",
        " ".repeat(pad / 2),
        " ".repeat(pad - pad / 2)
    )?;
    writeln!(
        out,
        "  ╚══════════════════════════════════════════════════════════╝\n"
    )?;
    let rule = format!("  {}", "─".repeat(56));
    overview(out, t, &rule)?;
    tables(out, t, &rule)?;
    activity(out, t, &rule)?;
    Ok(())
}

fn overview(out: &mut impl Write, t: &Totals, rule: &str) -> Result<()> {
    writeln!(out, "  📋 Overview\n{rule}")?;
    writeln!(
        out,
        "  Sessions:          {:<12}  Messages:        {}",
        t.sessions, t.messages
    )?;
    writeln!(
        out,
        "  Tool calls:        {:<12}  User messages:   {}",
        t.tool_calls, t.user_messages
    )?;
    writeln!(
        out,
        "  Input tokens:      {:<12}  Output tokens:   {}",
        t.input, t.output
    )?;
    writeln!(out, "  Total tokens:      {}", t.input + t.output)?;
    writeln!(out, "  Est. cost:         ${:.4}", t.cost)?;
    if t.seconds > 0.0 {
        writeln!(
            out,
            "  Active time:       ~{:.1}h        Avg session:     ~{:.0}m",
            t.seconds / 3600.0,
            t.seconds / t.sessions as f64 / 60.0
        )?;
    }
    writeln!(
        out,
        "  Avg msgs/session:  {:.1}\n",
        t.messages as f64 / t.sessions as f64
    )?;

    Ok(())
}

/// Models, platforms and the tools called most.
fn tables(out: &mut impl Write, t: &Totals, rule: &str) -> Result<()> {
    let mut models: Vec<_> = t.models.iter().collect();
    models.sort_by_key(|(_, (_, tokens))| std::cmp::Reverse(*tokens));
    writeln!(
        out,
        "  🤖 Models Used\n{rule}\n  {:<30} {:>8} {:>12}",
        "Model", "Sessions", "Tokens"
    )?;
    for (model, (sessions, tokens)) in models {
        let name: String = model.chars().take(28).collect();
        writeln!(out, "  {name:<30} {sessions:>8} {tokens:>12}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  📱 Platforms\n{rule}\n  {:<14} {:>8} {:>10} {:>14}",
        "Platform", "Sessions", "Messages", "Tokens"
    )?;
    for (platform, (sessions, messages, tokens)) in &t.platforms {
        writeln!(
            out,
            "  {platform:<14} {sessions:>8} {messages:>10} {tokens:>14}"
        )?;
    }
    writeln!(out)?;
    if !t.tools.is_empty() {
        let mut tools: Vec<_> = t.tools.iter().collect();
        tools.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        writeln!(
            out,
            "  🔧 Top Tools\n{rule}\n  {:<28} {:>8} {:>8}",
            "Tool", "Calls", "%"
        )?;
        for (tool, n) in tools.iter().take(15) {
            let share = **n as f64 / t.tool_calls as f64 * 100.0;
            writeln!(out, "  {tool:<28} {n:>8} {share:>7.1}%")?;
        }
        if tools.len() > 15 {
            writeln!(out, "  ... and {} more tools", tools.len() - 15)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Sessions per weekday and the busiest hours.
fn activity(out: &mut impl Write, t: &Totals, rule: &str) -> Result<()> {
    writeln!(out, "  📅 Activity Patterns\n{rule}")?;
    for (day, (count, bar)) in WEEKDAYS
        .iter()
        .zip(t.weekdays.iter().zip(bars(&t.weekdays, 15)))
    {
        writeln!(out, "  {day}  {bar:<15} {count}")?;
    }
    let mut hours: Vec<(usize, u64)> = t
        .hours
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, n)| *n > 0)
        .collect();
    hours.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let peak: Vec<String> = hours
        .iter()
        .take(5)
        .map(|(h, n)| {
            format!(
                "{}{} ({n})",
                if h % 12 == 0 { 12 } else { h % 12 },
                if *h < 12 { "AM" } else { "PM" }
            )
        })
        .collect();
    writeln!(out, "\n  Peak hours (UTC): {}\n", peak.join(", "))?;
    Ok(())
}
