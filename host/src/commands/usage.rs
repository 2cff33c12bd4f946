//! `herald usage`: the usage books read by the operator, as a table (a line per instance and day,
//! then each instance's total) or as JSON. Read from the store, as every node writes there: a
//! running node's counts of its last few seconds are not in yet.

use std::io::Write;

use anyhow::Context;

use crate::cli::usage::UsageArgs;
use crate::store::usage::DayUsage;

pub async fn run(args: UsageArgs) -> anyhow::Result<()> {
    let since = crate::limits::usage::since_day(args.since.as_deref()).map_err(anyhow::Error::msg)?;
    let db = super::control(&args.store).await?;
    let rows = db.extension_usage(args.instance.as_deref(), &since).await.context("reading the usage books")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        for row in &rows {
            writeln!(out, "{}", serde_json::to_string(row)?)?;
        }
        out.flush()?;
        return Ok(());
    }
    writeln!(out, "instance\tday\tcpu ms\twait ms\tcalls ok\terror\tdeadline\tcpu\tmemory\ttrap\tfault\toutbound requests\toutbound bytes\trows written\tstorage bytes")?;
    let mut total: Option<(String, DayUsage)> = None;
    for row in &rows {
        if let Some((instance, sum)) = total.take_if(|(instance, _)| *instance != row.instance) {
            line(&mut out, &instance, "total", &sum)?;
        }
        line(&mut out, &row.instance, &row.day, &row.usage)?;
        total.get_or_insert_with(|| (row.instance.clone(), DayUsage::default())).1.add(&row.usage);
    }
    if let Some((instance, sum)) = total {
        line(&mut out, &instance, "total", &sum)?;
    }
    if rows.is_empty() {
        writeln!(out, "(no usage since {since})")?;
    }
    out.flush()?;
    Ok(())
}

fn line(out: &mut impl Write, instance: &str, day: &str, u: &DayUsage) -> std::io::Result<()> {
    let c = &u.calls;
    writeln!(
        out,
        "{instance}\t{day}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        u.cpu_us as f64 / 1000.0,
        u.wait_us as f64 / 1000.0,
        c.ok,
        c.error,
        c.deadline,
        c.cpu,
        c.memory,
        c.trap,
        c.fault,
        u.outbound_requests,
        u.outbound_bytes,
        u.rows_written,
        u.storage_bytes
    )
}
