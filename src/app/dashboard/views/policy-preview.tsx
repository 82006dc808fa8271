// What a form would change if saved (SEMANTICS §15), in an operator's words, shown inside the form
// above its Save, or on a removal's confirmation page above Remove or Detach: who gains and who loses which tools, the recorded calls it would decide otherwise
// (each linked to its record), and the scheduled runs. Every value is text the renderer escapes.
import type { ChangedCall, PreviewImpact, ScheduledChange, SenderChange, Verdict } from '../../../core/policy-preview';
import { encodeCursor } from '../../../core/page-cursor';
import type { PageContext } from './layout';
import { andList } from './plain-words';
import { VisibleText } from './visible-text';
import { Table } from './table';

/** The recorded traffic a dashboard preview replays. */
export const PREVIEW_WINDOW = '7d';
const WINDOW_WORDS = 'the last 7 days';

/**
 * What a form's Preview showed: the impact, how many agents the change reaches, and the names of
 * those the answer mentions; or why it changes no one's tools: a toolkit no agent holds (or a new
 * one), or All Tools, whose members are the manifest's whatever the form says.
 */
export type FormPreview =
  | { impact: PreviewImpact; reached: number; agentNames: ReadonlyMap<number, string>; reaches?: undefined }
  | { impact?: undefined; reaches: 'no_agent' | 'manifest' };

const WOULD_BE: Record<Verdict['status'], string> = {
  started: 'would run',
  denied: 'would be refused',
  skipped: 'would be left out',
  pending_approval: 'would wait for approval',
};

/** The Preview button beside a form's Save: the same form, sent to be previewed; the page opens at the answer. */
export function PreviewButton(props: { action: string }) {
  return (
    <button type="submit" class="secondary" name="preview" value="yes" formAction={`${props.action}#preview`}>
      Preview
    </button>
  );
}

/** The panel's heading level: one below the form's own heading (3 under a section's h2; 2 on a page of one form). */
type Level = 2 | 3;

function Heading(props: { level: Level | 4; id?: string; children: string }) {
  const Tag = `h${props.level}` as 'h2' | 'h3' | 'h4';
  return <Tag id={props.id}>{props.children}</Tag>;
}

/**
 * What the panel previews: a form's Save, or a one-click removal's Remove or Detach on its
 * confirmation page; the heading and the closing line name that button.
 */
export type PreviewedAction = 'save' | 'remove' | 'detach';

const PANEL_WORDS: Record<PreviewedAction, { heading: string; hint: string; column: string }> = {
  save: {
    heading: 'If you save this',
    hint: 'Nothing has been saved. Save makes it live at once; Preview again after changing the form.',
    column: 'If saved',
  },
  remove: { heading: 'If you remove it', hint: 'Nothing has been removed yet. Remove makes it live at once.', column: 'If removed' },
  detach: { heading: 'If you detach it', hint: 'Nothing has been detached yet. Detach makes it live at once.', column: 'If detached' },
};

export function PreviewPanel(props: { ctx: PageContext; preview: FormPreview; level?: Level; action?: PreviewedAction }) {
  const level = props.level ?? 3;
  const { ctx, preview } = props;
  const words = PANEL_WORDS[props.action ?? 'save'];
  return (
    <section class="preview" id="preview" aria-labelledby="preview-heading">
      <Heading level={level} id="preview-heading">
        {words.heading}
      </Heading>
      {preview.reaches === 'manifest' ? (
        <p>
          <strong>Nothing would change for anyone: All Tools holds every registered tool, whatever this form says.</strong> Only its name
          and description would change.
        </p>
      ) : preview.impact === undefined ? (
        <p>
          <strong>Nothing would change for anyone: no agent holds this toolkit yet.</strong> It grants tools once it is attached.
        </p>
      ) : (
        <ImpactInWords
          ctx={ctx}
          impact={preview.impact}
          reached={preview.reached}
          agentNames={preview.agentNames}
          sub={sub(level)}
          column={words.column}
        />
      )}
      <p class="hint">{words.hint}</p>
    </section>
  );
}

function sub(level: Level): Level | 4 {
  return level === 2 ? 3 : 4;
}

function ImpactInWords(props: {
  ctx: PageContext;
  impact: PreviewImpact;
  reached: number;
  agentNames: ReadonlyMap<number, string>;
  sub: Level | 4;
  column: string;
}) {
  const { ctx, impact, reached, agentNames, sub } = props;
  const many = reached > 1;
  const agent = (id: number) => agentNames.get(id) ?? `agent ${id}`;
  const whose = many ? `the ${reached} agents that hold it` : ([...agentNames.values()][0] ?? 'the agent that holds it');
  const examined = `${impact.runs_examined} ${impact.runs_examined === 1 ? 'run' : 'runs'} and ${impact.calls_examined} tool ${impact.calls_examined === 1 ? 'call' : 'calls'} of ${whose}`;
  const { senders, scheduled, calls } = impact;
  const nothing =
    senders.gaining.length + senders.losing.length + scheduled.gaining.length + scheduled.losing.length + calls.changed.length === 0;
  return (
    <>
      <p>{`Replayed on what was recorded in ${WINDOW_WORDS}: ${examined}.`}</p>
      {nothing ? (
        <p>
          <strong>
            Nothing would change: no sender or scheduled run of {WINDOW_WORDS} would gain or lose a tool, and every recorded call would be
            decided as it was.
          </strong>
        </p>
      ) : null}
      <SenderList title="Who would gain tools" verb="would gain" rows={senders.gaining} agent={agent} many={many} sub={sub} />
      <SenderList title="Who would lose tools" verb="would lose" rows={senders.losing} agent={agent} many={many} sub={sub} />
      <ScheduledList title="Scheduled runs that would gain tools" verb="would gain" rows={scheduled.gaining} agent={agent} sub={sub} />
      <ScheduledList title="Scheduled runs that would lose tools" verb="would lose" rows={scheduled.losing} agent={agent} sub={sub} />
      {calls.changed.length > 0 ? (
        <ChangedCalls ctx={ctx} impact={impact} agent={agent} many={many} sub={sub} column={props.column} />
      ) : null}
      {impact.truncated ? <p class="hint">Each list shows its first 100 entries; the counts count them all.</p> : null}
      {impact.not_replayed.calls > 0 ? (
        <p class="hint">
          {`${impact.not_replayed.calls} recorded ${impact.not_replayed.calls === 1 ? 'call was' : 'calls were'} not replayed: ${impact.not_replayed.reason ?? ''}.`}
        </p>
      ) : null}
    </>
  );
}

function SenderList(props: {
  title: string;
  verb: string;
  rows: SenderChange[];
  agent: (id: number) => string;
  many: boolean;
  sub: Level | 4;
}) {
  if (props.rows.length === 0) return null;
  return (
    <>
      <Heading level={props.sub}>{props.title}</Heading>
      <ul>
        {props.rows.map((r) => (
          <li key={`${r.agent_id} ${r.routing_key ?? ''}`}>
            {r.routing_key === null ? 'Senders with no usable address' : <VisibleText text={r.routing_key} />}
            {props.many ? `, writing to ${props.agent(r.agent_id)},` : ''}
            {` ${props.verb} ${andList(r.tools)} (${runs(r.runs)} in ${WINDOW_WORDS}).`}
          </li>
        ))}
      </ul>
    </>
  );
}

function ScheduledList(props: { title: string; verb: string; rows: ScheduledChange[]; agent: (id: number) => string; sub: Level | 4 }) {
  if (props.rows.length === 0) return null;
  return (
    <>
      <Heading level={props.sub}>{props.title}</Heading>
      <ul>
        {props.rows.map((r) => (
          <li
            key={r.agent_id}
          >{`${props.agent(r.agent_id)}'s scheduled runs ${props.verb} ${andList(r.tools)} (${runs(r.runs)} in ${WINDOW_WORDS}).`}</li>
        ))}
      </ul>
    </>
  );
}

function ChangedCalls(props: {
  ctx: PageContext;
  impact: PreviewImpact;
  agent: (id: number) => string;
  many: boolean;
  sub: Level | 4;
  column: string;
}) {
  const { ctx, impact } = props;
  const { counts } = impact.calls;
  const total = counts.refused + counts.admitted + counts.pending_approval + counts.cap_exceeded;
  const parts = [
    counts.refused > 0 ? `${counts.refused} would be refused` : null,
    counts.cap_exceeded > 0 ? `${counts.cap_exceeded} would be over a cap` : null,
    counts.admitted > 0 ? `${counts.admitted} would run` : null,
    counts.pending_approval > 0 ? `${counts.pending_approval} would wait for approval` : null,
  ].filter((p): p is string => p !== null);
  return (
    <>
      <Heading level={props.sub}>Recorded calls it would decide otherwise</Heading>
      <p>{`${total} recorded ${total === 1 ? 'call' : 'calls'} would be decided otherwise: ${andList(parts)}.`}</p>
      <Table caption="Recorded calls it would decide otherwise" columns={['Record', 'When (UTC)', 'Tool', 'Sender', 'Was', props.column]}>
        {impact.calls.changed.map((c) => (
          <tr key={c.call_id}>
            <td>
              <a href={recordHref(ctx, c)}>{`Call ${c.call_id}`}</a>
              {props.many ? ` (${props.agent(c.agent_id)})` : ''}
            </td>
            <td>{c.at.replace('T', ' ').slice(0, 19)}</td>
            <td>
              <code>{c.tool_id}</code>
            </td>
            <td>{c.routing_key === null ? <span class="muted">no sender</span> : <VisibleText text={c.routing_key} />}</td>
            <td>{c.was}</td>
            <td>{`${WOULD_BE[c.would_be]}${c.would_be === 'started' ? '' : ` (${c.reason.replace(/_/g, ' ')})`}`}</td>
          </tr>
        ))}
      </Table>
    </>
  );
}

/** A record on its agent's Tool calls page: the page that starts at it, opened at its row. */
export function recordHref(ctx: PageContext, call: Pick<ChangedCall, 'agent_id' | 'call_id'>): string {
  return `${ctx.base}/tool-calls?agent=${call.agent_id}&after=${encodeCursor([call.call_id + 1])}#call-${call.call_id}`;
}

function runs(n: number): string {
  return `${n} ${n === 1 ? 'run' : 'runs'}`;
}
