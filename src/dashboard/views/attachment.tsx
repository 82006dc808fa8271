// Configure Access Settings: one attachment's terms. The sender gate's rules (add, remove; a
// refused pattern shows why beside the field) and the Allow on scheduled runs switch.
import type { AgentView } from '../../services/agents';
import type { AttachmentView } from '../../services/attachments';
import { Checkbox, PostForm, type FieldErrors } from './form';
import { Layout, type PageContext } from './layout';
import { gateSummary } from './plain-words';
import { RuleForm, RulesTable, type RuleFormValues } from './rules-table';

export function AttachmentPage(props: { ctx: PageContext; agent: AgentView; attachment: AttachmentView; rule: RuleFormValues; errors: FieldErrors }) {
  const { ctx, agent, attachment, errors } = props;
  const here = `${ctx.base}/agents/${agent.id}/toolkits/${attachment.id}`;
  return (
    <Layout ctx={ctx} section="agents" title="Configure Access Settings" lead={`${attachment.toolkit.name}, attached to ${agent.name}.`}>
      <p>
        <a href={`${ctx.base}/agents/${agent.id}`}>Back to {agent.name}</a>
      </p>

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
          hint="An exact address (mara@thescoop.com) or one with a single * (*@thescoop.com). Tags and case do not matter: Mara+billing@TheScoop.com is mara@thescoop.com."
          submit="Add rule"
        />
      </section>

      <section aria-labelledby="scheduled">
        <h2 id="scheduled">Scheduled runs</h2>
        <PostForm action={here} csrfToken={ctx.csrfToken} label="Scheduled runs">
          <Checkbox
            id="allow_proactive"
            name="allow_proactive"
            label="Allow on scheduled runs"
            checked={attachment.allow_proactive}
            description="A scheduled run has no sender, so the gate cannot apply: these tools are offered to the agent's scheduled runs only when this is on."
          />
          <button type="submit">Save</button>
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
