// The enabled_tools migration report as an admin reads it in a terminal (the CLI's default output,
// and the example in docs/MIGRATING.md). `--json` prints the report object itself instead.
import type { MigrationReport, ReportToolkit } from './report';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// Tokens are shown quoted, with invisible characters spelt out (a byte-order mark or a
// zero-width space is exactly why a token granted nothing), and cut short for a terminal.
const SHOWN_TOKEN_CHARS = 40;
const INVISIBLE = /[\p{C}\p{Z}]/gu;

function showToken(token: string): string {
  const clipped = /^(.*)… \((\d+) characters\)$/su.exec(token);
  const text = clipped ? clipped[1]! : token;
  const total = clipped ? Number(clipped[2]) : token.length;
  const shown = text.length > SHOWN_TOKEN_CHARS ? text.slice(0, SHOWN_TOKEN_CHARS) : text;
  const quoted = `"${shown.replace(/["\\]/g, (c) => `\\${c}`).replace(INVISIBLE, (c) => (c === ' ' ? c : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`))}"`;
  return shown.length < total ? `${quoted}… (${total} characters)` : quoted;
}

const HEADINGS: Record<MigrationReport['mode'], string> = {
  dry_run: 'dry run: nothing was changed',
  apply: 'apply',
  undo: 'undo',
};

export function formatReport(report: MigrationReport): string {
  const lines: string[] = [];
  const state = report.mode === 'dry_run' ? '' : report.committed ? ', committed' : ', rolled back: nothing was changed';
  lines.push(`enabled_tools migration, ${HEADINGS[report.mode]}${state}${report.map_typos ? ' (mapping typos)' : ''}`);
  if (report.mode === 'undo') return [...lines, ...undoLines(report)].join('\n');
  lines.push(`Registered tools: ${report.tools.join(', ')}`);
  lines.push('');

  const a = report.agents;
  const would = report.mode === 'dry_run' ? 'would change' : 'changed';
  lines.push(`Agents read: ${a.read}`);
  lines.push(
    `  ${a.follow} follow their legacy string (${a.without_tools} of them hold no tool): ${a.changed} ${would}, ${a.unchanged} already up to date`,
  );
  lines.push(`  ${a.skipped} skipped and left as they are${a.skipped > 0 ? ' (listed below)' : ''}`);
  if (a.with_mapped_typos > 0) lines.push(`  ${plural(a.with_mapped_typos, 'agent')} granted a mapped typo`);
  lines.push('');

  lines.push('Toolkits, one per distinct set of valid ids (attached with no gate rules, scheduled runs off):');
  if (report.toolkits.length === 0) lines.push('  (none: no agent holds a valid tool id)');
  const width = Math.min(60, Math.max(0, ...report.toolkits.map((t) => t.name.length)));
  for (const t of report.toolkits) {
    lines.push(`  ${toolkitStatus(t).padEnd(12)} ${t.name.padEnd(width)}  ${plural(t.agents, 'agent')}`);
    if (t.note) lines.push(`  ${''.padEnd(12)} (${t.note})`);
  }
  lines.push('');

  if (report.unmatched_tokens.length > 0) {
    lines.push(
      report.map_typos
        ? 'Tokens that are not exact tool ids (a suggestion is granted when mapped):'
        : 'Tokens that are not exact tool ids, granting nothing as before (--map-typos grants the suggestion):',
    );
    const tokenWidth = Math.min(SHOWN_TOKEN_CHARS + 2, Math.max(...report.unmatched_tokens.map((u) => showToken(u.token).length)));
    for (const u of report.unmatched_tokens) {
      const meant = u.suggestion ? `did you mean ${u.suggestion}?` : 'no registered id is close';
      const mapped = u.mapped_for > 0 ? `, mapped for ${u.mapped_for}` : '';
      lines.push(`  ${showToken(u.token).padEnd(tokenWidth)}  ${meant.padEnd(30)} ${plural(u.agents, 'agent')}${mapped}`);
    }
    if (report.left_out.unmatched_tokens > 0) lines.push(`  … and ${report.left_out.unmatched_tokens} more occurrences of other tokens`);
    lines.push('  By agent:');
    for (const u of report.unmatched) {
      lines.push(
        `    #${u.agent_id} ${u.agent_name ?? '(no name)'}: ${showToken(u.token)} → ${u.suggestion ?? '(nothing close)'}${u.mapped ? ' (mapped)' : ''}`,
      );
    }
    if (report.left_out.unmatched > 0) lines.push(`    … and ${report.left_out.unmatched} more (the counts above are complete)`);
    lines.push('');
  }

  if (report.skipped.length > 0) {
    lines.push("Skipped agents (their access is the operators'; the migration does not touch it):");
    for (const s of report.skipped) lines.push(`  #${s.agent_id} ${s.agent_name ?? '(no name)'}: ${s.detail}`);
    if (report.left_out.skipped > 0) lines.push(`  … and ${report.left_out.skipped} more`);
    lines.push('');
  }

  const mapped = mappedLines(report);
  lines.push(...mapped);

  const v = report.verification;
  if (v.status === 'not_run') {
    lines.push('Verification: not run');
  } else {
    const over = v.over === 'plan' ? 'the grants planned' : 'the grants written, read back before commit';
    lines.push(`Verification over ${over}: ${v.status.toUpperCase()}`);
    // With mapped typos the new answer is not the plain legacy one, and saying it equals would hide
    // exactly the access the run changed: it is held to the legacy string read with those mappings.
    const against =
      mapped.length > 0
        ? 'the new answer checked against the legacy one read with the mapped typos above as the tools they were mapped to (not the plain legacy answer, which they change),'
        : 'the legacy answer equals the new one';
    lines.push(`  ${plural(v.agents_checked, 'agent')} × ${plural(v.tools.length, 'tool')}: ${against} for a ${v.runs.join(' and a ')}`);
  }
  for (const m of v.mismatches) lines.push(`  ✗ agent ${m.agent_id}${m.tool_id ? ` / ${m.tool_id}` : ''}: ${m.problem}`);
  if (v.mismatch_count > v.mismatches.length) lines.push(`  … and ${v.mismatch_count - v.mismatches.length} more`);
  lines.push('');

  const c = report.changes;
  lines.push(
    report.mode === 'dry_run'
      ? 'Changes: none (dry run). Run with --apply to make them.'
      : `Changes: ${plural(c.toolkits_created, 'toolkit')} created, ${plural(c.attachments_created, 'grant')} made, ${plural(c.attachments_removed, 'grant')} removed.`,
  );
  lines.push(`Took ${report.duration_ms} ms.`);
  return lines.join('\n');
}

/**
 * The access mapped typos grant beyond the legacy check: which agents, which tools, from which
 * token. Empty when no typo is mapped. The per-agent list is bounded as the report's is; the count
 * of agents is complete.
 */
function mappedLines(report: MigrationReport): string[] {
  const count = report.agents.with_mapped_typos;
  if (count === 0) return [];
  const agents = plural(count, 'agent');
  const would = report.mode === 'dry_run' || !report.committed;
  const heading = !report.map_typos
    ? `Mapped typos kept from an earlier --map-typos apply: ${agents} get a tool their legacy string grants nothing for, so their access is not the legacy check's:`
    : would
      ? `Mapped typos would change the access of ${agents}: each would get a tool its legacy string grants nothing for:`
      : `Mapped typos changed the access of ${agents}: each now gets a tool its legacy string grants nothing for:`;
  const entries = report.unmatched.filter((u) => u.mapped);
  const lines = [heading];
  for (const u of entries) lines.push(`  #${u.agent_id} ${u.agent_name ?? '(no name)'}: ${u.suggestion} (from ${showToken(u.token)})`);
  const listed = new Set(entries.map((u) => u.agent_id)).size;
  if (listed < count) lines.push(`  … and ${plural(count - listed, 'more agent')} (the count above is complete)`);
  lines.push('');
  return lines;
}

function toolkitStatus(t: ReportToolkit): string {
  if (t.status === 'reuse') return `reuse #${t.toolkit_id}`;
  if (t.status === 'created') return `created #${t.toolkit_id}`;
  return 'create';
}

function undoLines(report: MigrationReport): string[] {
  const c = report.changes;
  const lines = [
    '',
    `Removed ${plural(c.attachments_removed, 'legacy grant')} (from ${plural(report.agents.changed, 'agent')}) and ${plural(c.toolkits_removed, 'legacy toolkit')}.`,
  ];
  const kept = report.undo;
  if (kept && kept.kept_attachments.length > 0) {
    lines.push('Kept legacy grants an operator has edited (gate rules or scheduled runs):');
    for (const k of kept.kept_attachments) lines.push(`  attachment #${k.attachment_id} of agent #${k.agent_id}: ${k.toolkit_name}`);
  }
  if (kept && kept.kept_toolkits.length > 0) {
    lines.push('Kept legacy toolkits, in use by grants that stay or with members an operator edited:');
    for (const k of kept.kept_toolkits)
      lines.push(`  #${k.toolkit_id} ${k.name}: ${plural(k.attachments, 'grant')}${k.members_edited ? ', members edited' : ''}`);
  }
  lines.push(
    `Verification: ${report.verification.status.toUpperCase()} (no unedited legacy grant and no unused, unedited legacy toolkit remains)`,
  );
  lines.push('The enabled_tools strings were never changed: the legacy check reads them as before.');
  lines.push(`Took ${report.duration_ms} ms.`);
  return lines;
}
