// A list of allow/deny rules with a Remove button each: a sender gate's rules on Configure Access
// Settings, and an agent's access rules on its page.
import type { RuleView } from '../../services/attachments';
import { PostForm } from './form';

export function RulesTable(props: { caption: string; rules: RuleView[]; csrfToken: string; removeAction: (rule: RuleView) => string; removeLabel: (rule: RuleView) => string }) {
  if (props.rules.length === 0) return null;
  return (
    <table>
      <caption class="visually-hidden">{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Kind</th>
          <th scope="col">Pattern</th>
          <th scope="col">
            <span class="visually-hidden">Remove</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.rules.map((r) => (
          <tr key={r.id}>
            <td>
              <span class={`badge ${r.kind}`}>{r.kind}</span>
            </td>
            <td>
              <code>{r.pattern}</code>
            </td>
            <td class="actions">
              <PostForm action={props.removeAction(r)} csrfToken={props.csrfToken}>
                <button type="submit" class="link" aria-label={props.removeLabel(r)}>
                  Remove
                </button>
              </PostForm>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
