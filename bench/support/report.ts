/**
 * What a benchmark section returns, and its rendering as a console table and as Markdown (the
 * figures in docs/benchmarks.md are copied from the Markdown of one full run).
 */

export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
}

export interface Target {
  name: string;
  target: string;
  measured: string;
  met: boolean;
}

export interface SectionResult {
  id: string;
  title: string;
  /** The command that reproduces this section alone. */
  command: string;
  tables: Table[];
  targets: Target[];
  notes: string[];
  /** Raw figures for the JSON artifact. */
  data: unknown;
  seconds?: number;
}

function widths(table: Table): number[] {
  return table.columns.map((c, i) => Math.max(c.length, ...table.rows.map((r) => (r[i] ?? "").length)));
}

const numeric = (cell: string) => /^[-+~]?[\d,.]+\s*(ms|x|%|kB|KB|MB\/s|MB|GB\/s)?$/.test(cell.trim());

export function renderTableText(table: Table): string {
  const w = widths(table);
  const line = (cells: string[]) =>
    cells.map((c, i) => (numeric(c) ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join("  ").trimEnd();
  return [
    table.title,
    line(table.columns),
    w.map((n) => "-".repeat(n)).join("  "),
    ...table.rows.map((r) => line(table.columns.map((_, i) => r[i] ?? ""))),
  ].join("\n");
}

export function renderTableMarkdown(table: Table): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const align = table.columns.map((_, i) => (table.rows.length > 0 && table.rows.every((r) => numeric(r[i] ?? "")) ? "--:" : "---"));
  return [
    `| ${table.columns.map(esc).join(" | ")} |`,
    `| ${align.join(" | ")} |`,
    ...table.rows.map((r) => `| ${table.columns.map((_, i) => esc(r[i] ?? "")).join(" | ")} |`),
  ].join("\n");
}

export function renderTargetsTable(targets: Target[]): Table {
  return {
    title: "Targets",
    columns: ["target", "goal", "measured", "met"],
    rows: targets.map((t) => [t.name, t.target, t.measured, t.met ? "yes" : "NO"]),
  };
}

export function renderSectionText(s: SectionResult): string {
  const parts = [`== ${s.title} ==  (${s.command}${s.seconds !== undefined ? `, ${s.seconds.toFixed(0)} s` : ""})`];
  for (const t of s.tables) parts.push(renderTableText(t));
  if (s.targets.length > 0) parts.push(renderTableText(renderTargetsTable(s.targets)));
  for (const n of s.notes) parts.push(`note: ${n}`);
  return parts.join("\n\n");
}

export function renderSectionMarkdown(s: SectionResult): string {
  const parts = [`### ${s.title}`, `Command: \`${s.command}\``];
  for (const t of s.tables) parts.push(`**${t.title}**\n\n${renderTableMarkdown(t)}`);
  if (s.targets.length > 0) parts.push(`**Targets**\n\n${renderTableMarkdown(renderTargetsTable(s.targets))}`);
  for (const n of s.notes) parts.push(`- ${n}`);
  return parts.join("\n\n");
}
