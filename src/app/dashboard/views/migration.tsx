// Migrate enabled_tools: start a dry run, read its report (the typo tokens with the id each most
// likely meant), then apply, then undo if need be. A running job's page reloads itself.
import type { MigrationReport } from '../../../legacy/report';
import type { Job } from '../jobs';
import { Checkbox, PostForm } from './form';
import { Layout, type PageContext } from './layout';
import { plural } from './toolkits';
import { Table } from './table';

const KIND_WORDS: Record<Job['kind'], string> = { dry_run: 'Dry run', apply: 'Apply', undo: 'Undo' };
// A job with no news for this long most likely stopped with its instance.
const STALE_MS = 10 * 60 * 1000;

export function MigrationPage(props: { ctx: PageContext; jobs: Job[] }) {
  const { ctx } = props;
  return (
    <Layout
      ctx={ctx}
      section="migration"
      title="Migrate enabled_tools"
      lead="Turns each agent's legacy enabled_tools string into toolkit grants with exactly the same access. Start with a dry run: it changes nothing and reports what the migration would do."
    >
      <PostForm action={`${ctx.base}/migration/jobs`} csrfToken={ctx.csrfToken} label="Start a dry run">
        <input type="hidden" name="mode" value="dry_run" />
        <Checkbox
          id="map_typos"
          name="map_typos"
          label="Grant what typos most likely meant"
          description="Off, a token that is not exactly a tool id grants nothing, as in the legacy system. On, Email_Analyzer grants email_analyzer."
        />
        <button type="submit">Run dry run</button>
      </PostForm>
      <JobList ctx={ctx} jobs={props.jobs} />
    </Layout>
  );
}

function JobList({ ctx, jobs }: { ctx: PageContext; jobs: Job[] }) {
  if (jobs.length === 0) return null;
  return (
    <section aria-labelledby="recent">
      <h2 id="recent">Recent runs</h2>
      <ul>
        {jobs.map((j) => (
          <li key={j.id}>
            <a href={`${ctx.base}/migration/jobs/${j.id}`}>{`${KIND_WORDS[j.kind]} #${j.id}`}</a>
            {`: ${statusWords(j)}, started ${j.created_at.toISOString().replace('T', ' ').slice(0, 19)} UTC`}
          </li>
        ))}
      </ul>
    </section>
  );
}

function statusWords(job: Job): string {
  if (job.status === 'running')
    return Date.now() - job.updated_at.getTime() > STALE_MS ? 'no news for ten minutes (it may have stopped)' : 'running';
  return job.status === 'succeeded' ? 'done' : 'failed';
}

export function JobPage(props: { ctx: PageContext; job: Job }) {
  const { ctx, job } = props;
  const running = job.status === 'running' && Date.now() - job.updated_at.getTime() <= STALE_MS;
  const title = `${KIND_WORDS[job.kind]} #${job.id}${job.map_typos ? ', mapping typos' : ''}`;
  return (
    <Layout ctx={ctx} section="migration" title={title} refreshSeconds={running ? 1 : undefined}>
      <p>
        <a href={`${ctx.base}/migration`}>Back to Migrate enabled_tools</a>
      </p>
      {job.status === 'running' ? <Progress job={job} stale={!running} /> : null}
      {job.status === 'failed' ? (
        <p class="error-summary" role="alert">
          {job.error}
        </p>
      ) : null}
      {job.report ? <Report report={job.report} /> : null}
      {job.status === 'succeeded' && job.kind === 'dry_run' ? (
        <PostForm action={`${ctx.base}/migration/jobs`} csrfToken={ctx.csrfToken} label="Apply the migration">
          <input type="hidden" name="mode" value="apply" />
          {job.map_typos ? <input type="hidden" name="map_typos" value="on" /> : null}
          <p>
            Applying makes these grants in one transaction, checks every agent's access against its legacy string before committing, and
            commits nothing if any differs.
          </p>
          <button type="submit">Apply the migration{job.map_typos ? ', mapping typos' : ''}</button>
        </PostForm>
      ) : null}
      {job.status === 'succeeded' && job.kind === 'apply' ? (
        <PostForm action={`${ctx.base}/migration/jobs`} csrfToken={ctx.csrfToken} label="Undo the migration">
          <input type="hidden" name="mode" value="undo" />
          <p>
            Undo removes the legacy grants and toolkits the migration made. Grants an operator has since edited stay. The enabled_tools
            strings were never changed.
          </p>
          <button type="submit" class="danger">
            Undo the migration
          </button>
        </PostForm>
      ) : null}
    </Layout>
  );
}

function Progress({ job, stale }: { job: Job; stale: boolean }) {
  const p = job.progress;
  const phase = p?.phase === 'verify' ? 'Verifying' : 'Planning';
  return (
    <div role="status" class="progress">
      {stale ? (
        <p class="warning-text">
          No progress for ten minutes: the instance running it may have stopped. An apply or undo that did not finish committed nothing.
        </p>
      ) : p && p.total > 0 ? (
        <>
          <label for="job-progress">{`${phase}: ${p.done.toLocaleString('en')} of ${p.total.toLocaleString('en')} agents`}</label>
          <progress id="job-progress" max={p.total} value={p.done}>{`${Math.round((100 * p.done) / p.total)}%`}</progress>
        </>
      ) : (
        <p>Running… this page follows it.</p>
      )}
    </div>
  );
}

function Report({ report }: { report: MigrationReport }) {
  const a = report.agents;
  if (report.mode === 'undo') {
    return (
      <section aria-labelledby="report">
        <h2 id="report">Report</h2>
        <p>{`Removed ${plural(report.changes.attachments_removed, 'legacy grant')} from ${plural(a.changed, 'agent')}, and ${plural(report.changes.toolkits_removed, 'legacy toolkit')}. Check: ${report.verification.status}.`}</p>
        {report.undo && report.undo.kept_attachments.length > 0 ? (
          <p>{`Kept ${plural(report.undo.kept_attachments.length, 'legacy grant')} an operator has edited (gate rules or scheduled runs).`}</p>
        ) : null}
      </section>
    );
  }
  const would = report.mode === 'dry_run' ? 'would change' : 'changed';
  return (
    <section aria-labelledby="report">
      <h2 id="report">
        {report.mode === 'dry_run'
          ? 'Report: nothing was changed'
          : report.committed
            ? 'Report: committed'
            : 'Report: rolled back, nothing was changed'}
      </h2>
      <dl class="counts">
        <dt>Agents read</dt>
        <dd>{a.read}</dd>
        <dt>Follow their string</dt>
        <dd>{`${a.follow} (${a.changed} ${would}, ${a.unchanged} already up to date, ${a.without_tools} hold no tool)`}</dd>
        <dt>Left alone</dt>
        <dd>{a.skipped}</dd>
        <dt>With tokens that are not tool ids</dt>
        <dd>{a.with_unmatched_tokens}</dd>
        <dt>Check of every agent's access</dt>
        <dd>
          <span
            class={`badge ${report.verification.status === 'passed' ? 'success' : report.verification.status === 'failed' ? 'denied' : ''}`}
          >
            {report.verification.status}
          </span>
          {` ${plural(report.verification.agents_checked, 'agent')}, ${plural(report.verification.tools.length, 'tool')}`}
        </dd>
      </dl>

      <h3>Toolkits</h3>
      {report.toolkits.length === 0 ? (
        <p>None: no agent holds a valid tool id.</p>
      ) : (
        <Table caption="Legacy toolkits" columns={['Toolkit', 'State', 'Agents']}>
          {report.toolkits.map((t) => (
            <tr key={t.name}>
              <th scope="row">{t.name}</th>
              <td>
                {t.status === 'create'
                  ? 'to be created'
                  : t.status === 'created'
                    ? `created (#${t.toolkit_id})`
                    : `exists (#${t.toolkit_id})`}
              </td>
              <td>{t.agents}</td>
            </tr>
          ))}
        </Table>
      )}

      <h3>Tokens that are not tool ids</h3>
      {report.unmatched_tokens.length === 0 ? (
        <p>None: every token is an exact tool id.</p>
      ) : (
        <>
          <p>
            {report.map_typos
              ? 'Where a likely id is shown, it was granted.'
              : 'These grant nothing, as in the legacy system. Run again with "Grant what typos most likely meant" to grant the likely id.'}
          </p>
          <Table caption="Tokens that grant nothing" columns={['Token', 'Likely id', 'Agents']}>
            {report.unmatched_tokens.map((u) => (
              <tr key={u.token}>
                <td>
                  <code>{JSON.stringify(u.token)}</code>
                </td>
                <td>{u.suggestion ? <code>{u.suggestion}</code> : <span class="muted">nothing close</span>}</td>
                <td>{u.agents}</td>
              </tr>
            ))}
          </Table>
        </>
      )}

      {report.skipped.length > 0 ? (
        <>
          <h3>Agents left alone</h3>
          <ul>
            {report.skipped.map((s) => (
              <li key={s.agent_id}>{`#${s.agent_id} ${s.agent_name ?? '(no name)'}: ${s.detail}`}</li>
            ))}
          </ul>
        </>
      ) : null}
      {report.verification.mismatches.length > 0 ? (
        <>
          <h3>Differences found</h3>
          <ul>
            {report.verification.mismatches.map((m, i) => (
              <li key={i}>{`Agent #${m.agent_id}${m.tool_id ? `, ${m.tool_id}` : ''}: ${m.problem}`}</li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
