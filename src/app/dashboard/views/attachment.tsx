// Configure Access Settings: one attachment's terms. The sender gate's rules (add, remove; a
// refused pattern shows why beside the field), approval (who approves its tools' calls), and the
// Allow on scheduled runs switch. Each form's Preview shows, above its Save, what saving it would
// change (SEMANTICS §15); a rule's Remove and Detach show it on their confirmation page first.
import type { AgentView } from '../../../services/agents';
import type { AttachmentView } from '../../../services/attachments';
import { Checkbox, PostForm, SelectField, TextField, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';
import { gateSummary } from './plain-words';
import { CandidateTerms } from './candidate';
import { PreviewButton, PreviewPanel, type FormPreview } from './policy-preview';
import { RuleForm, RulesTable, TryAsCandidate, type RuleFormValues } from './rules-table';
import { Table } from './table';

/** The page's forms that change the attachment's terms, each with its Preview. */
export type TermsForm = 'rule' | 'approval' | 'cap' | 'scheduled';

/** The approval form as sent (or as the attachment stands): required or not, the patterns as typed, and why they were refused. */
export interface ApprovalFormValues {
  required: boolean;
  approvers: string;
  errors: FieldErrors;
}

/** The add-a-cap form as sent, shown again beside its errors. */
export interface CapFormValues {
  tool_id: string;
  per: string;
  limit: string;
  window: string;
}

export function AttachmentPage(props: {
  ctx: PageContext;
  agent: AgentView;
  attachment: AttachmentView;
  rule: RuleFormValues;
  errors: FieldErrors;
  approval: ApprovalFormValues;
  cap: { values: CapFormValues; errors: FieldErrors };
  toolNames: ReadonlyMap<string, string>;
  /** What a form's Preview showed, shown in that form above its Save. */
  preview?: { form: TermsForm; result: FormPreview };
  /** Allow on scheduled runs as the form sent it, when it is shown again. */
  scheduled?: boolean;
}) {
  const { ctx, agent, attachment, errors } = props;
  const here = `${ctx.base}/agents/${agent.id}/toolkits/${attachment.id}`;
  const previewOf = (form: TermsForm) => (props.preview?.form === form ? <PreviewPanel ctx={ctx} preview={props.preview.result} /> : null);
  return (
    <Layout ctx={ctx} section="agents" title="Configure Access Settings" lead={`${attachment.toolkit.name}, attached to ${agent.name}.`}>
      <p>
        <a href={`${ctx.base}/agents/${agent.id}`}>Back to {agent.name}</a>
      </p>

      {attachment.candidate !== undefined && (
        <section aria-labelledby="candidate">
          <h2 id="candidate">Candidate terms</h2>
          <p>
            Being tried beside the live terms below, which still decide every run.{' '}
            <a href={`${here}/candidate`}>See what they would change, promote or drop them</a>.
          </p>
          <CandidateTerms candidate={attachment.candidate} />
        </section>
      )}

      <section aria-labelledby="gate">
        <h2 id="gate">Sender gate</h2>
        <p>
          Which correspondents unlock these tools: checked against the address of the message being handled, each time.{' '}
          <strong>{gateSummary(attachment.rules)}</strong>
        </p>
        <RulesTable
          caption="Gate rules"
          rules={attachment.rules}
          csrfToken={ctx.csrfToken}
          removeAction={(r) => `${here}/rules/${r.id}/delete`}
          removeLabel={(r) => `Remove ${r.kind} rule ${r.pattern}`}
        />
        <h3 id="add-rule">Add a rule</h3>
        <RuleForm
          action={`${here}/rules`}
          csrfToken={ctx.csrfToken}
          label="Add a rule"
          value={props.rule}
          errors={errors}
          hint="An exact address (mara@thescoop.com) or one with a single * (*@thescoop.com). Tags and case do not matter: Mara+billing@TheScoop.com is mara@thescoop.com. Try as candidate: the rules with this one added are tried on live traffic first, and nothing changes for anyone until you promote them."
          submit="Add rule"
          tryAsCandidate
          previewable
          preview={previewOf('rule')}
        />
      </section>

      <section aria-labelledby="approval">
        <h2 id="approval">Approval</h2>
        <p>
          A sender the gate admits may still need someone's yes. With approval on, a call of these tools by a sender who is no approver does
          not run: it waits, with its exact input, for an approver to decide (on the Approvals page, or by answering in the same thread). An
          approver's own calls run as usual. <strong>{approvalSummary(attachment)}</strong>
        </p>
        <PostForm action={`${here}/approval`} csrfToken={ctx.csrfToken} label="Approval">
          <Checkbox
            id="require_approval"
            name="require_approval"
            label="Require approval"
            checked={props.approval.required}
            description="Changing these terms voids the requests still pending under the old ones."
          />
          <TextField
            id="approvers"
            name="approval"
            label="Approvers"
            multiline
            value={props.approval.approvers}
            errors={props.approval.errors}
            hint="One pattern per line, as in the gate (*@thescoop.com, mara@thescoop.com). None: only an operator approves."
          />
          {previewOf('approval')}
          <button type="submit">Save approval</button>
          <PreviewButton action={`${here}/approval`} />
          <TryAsCandidate />
        </PostForm>
      </section>

      <section aria-labelledby="caps">
        <h2 id="caps">Caps</h2>
        <p>
          How often these tools may run: at most so many calls within a window, counted for the whole agent or for each sender, on every
          instance at once. A call over a cap is refused and recorded, and nothing runs. Another attachment that offers the same tool
          without a cap lets it run on its terms.
        </p>
        {attachment.caps.length === 0 ? (
          <p>
            <strong>No caps: these tools run as often as they are asked.</strong>
          </p>
        ) : (
          <Table caption="Caps" columns={['Tool', 'At most']} actions="Remove">
            {attachment.caps.map((cap, i) => (
              <tr key={i}>
                <td>{cap.tool_id ? <code>{cap.tool_id}</code> : 'All its members together'}</td>
                <td>{`${cap.limit} ${cap.limit === 1 ? 'call' : 'calls'} per ${cap.per} per ${cap.window}`}</td>
                <td class="actions">
                  <PostForm action={`${here}/caps/${i}/delete`} csrfToken={ctx.csrfToken}>
                    <button type="submit" class="link" aria-label={`Remove the cap of ${cap.limit} per ${cap.per} per ${cap.window}`}>
                      Remove
                    </button>
                  </PostForm>
                </td>
              </tr>
            ))}
          </Table>
        )}
        <PostForm action={`${here}/caps`} csrfToken={ctx.csrfToken} class="inline-form" label="Add a cap">
          <SelectField
            id="cap-tool"
            name="tool_id"
            label="Tool"
            class="fit"
            value={props.cap.values.tool_id}
            errors={props.cap.errors}
            options={[
              { value: '', label: 'All its members together' },
              ...attachment.toolkit.member_tool_ids.map((id) => ({ value: id, label: toolLabel(id, props.toolNames) })),
            ]}
          />
          <SelectField
            id="cap-per"
            name="per"
            label="Per"
            value={props.cap.values.per}
            options={[
              { value: 'sender', label: 'sender' },
              { value: 'agent', label: 'agent' },
            ]}
            errors={props.cap.errors}
          />
          <TextField id="cap-limit" name="limit" label="Limit" value={props.cap.values.limit} errors={props.cap.errors} placeholder="3" />
          <TextField
            id="cap-window"
            name="window"
            label="Window"
            value={props.cap.values.window}
            errors={props.cap.errors}
            hint="A number and s, m, h or d: 1d, 12h, 90m."
          />
          {previewOf('cap')}
          <button type="submit">Add cap</button>
          <PreviewButton action={`${here}/caps`} />
          <TryAsCandidate />
        </PostForm>
      </section>

      <section aria-labelledby="scheduled">
        <h2 id="scheduled">Scheduled runs</h2>
        <PostForm action={here} csrfToken={ctx.csrfToken} label="Scheduled runs">
          <Checkbox
            id="allow_proactive"
            name="allow_proactive"
            label="Allow on scheduled runs"
            checked={props.scheduled ?? attachment.allow_proactive}
            description="A scheduled run has no sender, so the gate cannot apply: these tools are offered to the agent's scheduled runs only when this is on."
          />
          {previewOf('scheduled')}
          <button type="submit">Save</button>
          <PreviewButton action={here} />
          <TryAsCandidate />
        </PostForm>
      </section>

      <section aria-labelledby="detach">
        <h2 id="detach">Detach</h2>
        <p>Revokes this grant at once, with its gate rules. The toolkit itself stays.</p>
        <PostForm action={`${here}/detach`} csrfToken={ctx.csrfToken}>
          <button type="submit" class="danger">
            Detach {attachment.toolkit.name} from {agent.name}
          </button>
        </PostForm>
      </section>
    </Layout>
  );
}

/** A member as the menu names it: its display name and id, or its id and that it is gone from the code. */
function toolLabel(id: string, names: ReadonlyMap<string, string>): string {
  const name = names.get(id);
  return name === undefined ? `${id} (no longer registered)` : `${name} (${id})`;
}

function approvalSummary(attachment: AttachmentView): string {
  const terms = attachment.approval;
  if (terms === null) return 'Off: every admitted sender runs these tools at once.';
  if (terms.approvers.length === 0) return 'On: only an operator approves.';
  return `On: approvers are ${terms.approvers.join(', ')}.`;
}
