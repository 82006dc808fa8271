// Approval requests in PostgreSQL (SEMANTICS §12). Every change of a request's status is one
// conditional UPDATE (`WHERE status = 'pending'`), so of two instances deciding one request at once
// exactly one wins, and a decided request is never decided again. A pending request whose time is
// up is marked expired when anything reads or decides it: no clock needs to run for it.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import {
  approverName,
  decidedBy,
  type ApprovalRequestView,
  type ApprovalResult,
  type ApprovalStatus,
  type DecidedVia,
  type Decider,
  type NewApprovalRequest,
} from '../core/approval-request';
import { newDecisionCode } from '../core/decision-code';
import { storableJson } from '../core/storable-text';
import type { ClaimGrant } from '../run/tool-run';
import { loadAgentPolicy, type LoadedPolicy } from '../services/policy-loader';
import { recordToolCall, startToolCall, type StartedBy, type ToolCallRecord } from '../services/tool-calls';
import type { DispatchKind } from '../core/types';

interface RequestRow {
  id: number;
  agent_id: number;
  code: string;
  attachment_id: number;
  tool_id: string;
  input: unknown;
  status: ApprovalStatus;
  run: DispatchKind;
  routing_key: string | null;
  thread_reference: string | null;
  run_id: number | null;
  message_id: string | null;
  decided_by: string | null;
  decided_via: DecidedVia | null;
  decided_at: Date | null;
  void_reason: string | null;
  result: ApprovalResult | null;
  created_at: Date;
  expires_at: Date;
}

const SELECT = `SELECT r.id, r.agent_id, r.code, r.attachment_id, r.tool_id, r.input, r.status, r.run, r.routing_key, t.reference AS thread_reference,
  r.run_id, r.message_id, r.decided_by, r.decided_via, r.decided_at, r.void_reason, r.result, r.created_at, r.expires_at
  FROM approval_requests r LEFT JOIN threads t ON t.id = r.thread_id`;

/** Marks the agent's pending requests whose time is up, and says which (for metrics). */
const EXPIRE_DUE = `UPDATE approval_requests SET status = 'expired', decided_at = expires_at
  WHERE agent_id = :agentId AND status = 'pending' AND expires_at <= now() RETURNING id`;

// A row with version 0 is the effective version an agent without a row has: making it changes nothing
// but gives the lock something to hold. Shared, so claims do not wait for one another; a policy
// write's UPDATE waits for the claim, and the claim for a write in progress.
const LOCK_POLICY = `INSERT INTO agent_policy_versions (agent_id, version) SELECT id, 0 FROM agents WHERE id = :agentId ON CONFLICT (agent_id) DO NOTHING;
  SELECT version FROM agent_policy_versions WHERE agent_id = :agentId FOR SHARE;
  SELECT epoch FROM policy_epoch FOR SHARE`;

export class ApprovalStore {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly onExpired: (count: number) => void = () => undefined,
  ) {}

  /**
   * Files a call as a pending request with its `pending_approval` record, in one transaction; or,
   * when the same call is already pending in the same place (thread, attachment, tool and input),
   * returns that request and files nothing.
   */
  async file(
    request: NewApprovalRequest,
    record: Omit<ToolCallRecord, 'status' | 'duration_ms' | 'error'>,
  ): Promise<{ request: ApprovalRequestView; created: boolean }> {
    const scope =
      request.thread_id !== null
        ? `thread:${request.thread_id}`
        : request.run === 'scheduled'
          ? 'scheduled'
          : `sender:${request.routing_key ?? ''}`;
    // A model wrote the input: made storable first (SEMANTICS §13); what approval runs is what is kept.
    const input = JSON.stringify(storableJson(request.input ?? null));
    // A concurrent decision can end the pending request between the insert's conflict and the
    // read; a second pass then files anew.
    for (let attempt = 0; attempt < 3; attempt++) {
      const filed = await this.sequelize.transaction(async (transaction) => {
        await this.expireDue(request.agent_id, transaction);
        const [created] = await this.sequelize.query<{ id: number }>(
          `INSERT INTO approval_requests (agent_id, attachment_id, tool_id, input, input_digest, scope, run, routing_key, thread_id, run_id, message_id, expires_at, code)
           VALUES ($1, $2, $3, $4::jsonb, md5($4::jsonb::text), $5, $6, $7, $8, $9, $10, now() + $11 * interval '1 millisecond', $12)
           ON CONFLICT (agent_id, scope, attachment_id, tool_id, input_digest) WHERE status = 'pending' DO NOTHING RETURNING id`,
          {
            bind: [
              request.agent_id,
              request.attachment_id,
              request.tool_id,
              input,
              scope,
              request.run,
              request.routing_key,
              request.thread_id,
              request.run_id,
              request.message_id,
              request.expires_in_ms,
              newDecisionCode(),
            ],
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        if (created) {
          await recordToolCall(
            this.sequelize,
            { ...record, status: 'pending_approval', duration_ms: 0, error: null, approval_request_id: created.id },
            transaction,
          );
          return { id: created.id, created: true };
        }
        const [pending] = await this.sequelize.query<{ id: number }>(
          `SELECT id FROM approval_requests WHERE agent_id = $1 AND scope = $2 AND attachment_id = $3 AND tool_id = $4
             AND input_digest = md5($5::jsonb::text) AND status = 'pending'`,
          { bind: [request.agent_id, scope, request.attachment_id, request.tool_id, input], type: QueryTypes.SELECT, transaction },
        );
        return pending ? { id: pending.id, created: false } : null;
      });
      if (filed) return { request: await this.get(request.agent_id, filed.id), created: filed.created };
    }
    throw new Error('an approval request could not be filed: the same call kept being decided while it was filed');
  }

  /** One request of the agent's, or null. */
  async find(agentId: number, id: number): Promise<ApprovalRequestView | null> {
    await this.expireDue(agentId);
    const [row] = await this.sequelize.query<RequestRow>(`${SELECT} WHERE r.agent_id = :agentId AND r.id = :id`, {
      replacements: { agentId, id },
      type: QueryTypes.SELECT,
    });
    return row ? requestView(row) : null;
  }

  async get(agentId: number, id: number): Promise<ApprovalRequestView> {
    const found = await this.find(agentId, id);
    if (!found) throw new Error(`approval request ${id} of agent ${agentId} vanished`);
    return found;
  }

  /** The agent's requests, newest first; with `status`, only those. */
  /** Newest first; with `beforeId`, only the requests older than that one (a page after it). */
  async list(
    agentId: number,
    options: { status?: ApprovalStatus | undefined; limit: number; beforeId?: number },
  ): Promise<ApprovalRequestView[]> {
    await this.expireDue(agentId);
    const rows = await this.sequelize.query<RequestRow>(
      `${SELECT} WHERE r.agent_id = :agentId ${options.status ? 'AND r.status = :status' : ''} ${options.beforeId !== undefined ? 'AND r.id < :beforeId' : ''} ORDER BY r.id DESC LIMIT :limit`,
      {
        replacements: { agentId, status: options.status ?? null, limit: options.limit, beforeId: options.beforeId ?? null },
        type: QueryTypes.SELECT,
      },
    );
    return rows.map(requestView);
  }

  /** A thread's requests still pending, and those approved (which ran), oldest first. */
  async inThread(agentId: number, threadId: number): Promise<ApprovalRequestView[]> {
    await this.expireDue(agentId);
    const rows = await this.sequelize.query<RequestRow>(
      `${SELECT} WHERE r.agent_id = :agentId AND r.thread_id = :threadId AND r.status IN ('pending', 'approved') ORDER BY r.id`,
      {
        replacements: { agentId, threadId },
        type: QueryTypes.SELECT,
      },
    );
    return rows.map(requestView);
  }

  /**
   * Approves a pending request and writes the `started` record of its one execution, in one
   * transaction that first re-checks the grant (SEMANTICS §12a): the agent's policy is locked
   * against change (its version row, shared), read again, and `grant` asked whether the requester
   * would still be granted the call, and under which caps. So a policy change committed after the
   * request was filed and before this claim refuses it; one that starts later waits for the claim.
   * The record id; null when the request was no longer pending; `capped` when a cap has no room (it
   * stays pending); the reason when it no longer grants (nothing was written).
   */
  async claim(
    agentId: number,
    id: number,
    decider: Decider,
    record: Omit<ToolCallRecord, 'status' | 'duration_ms' | 'error'>,
    by: StartedBy,
    grant: (policy: LoadedPolicy | null) => ClaimGrant,
  ): Promise<number | null | 'capped' | { not_granted: string }> {
    await this.expireDue(agentId);
    const lost = Symbol('not pending');
    const capped = Symbol('capped');
    return await this.sequelize
      .transaction(async (transaction) => {
        // The version row first, before any other row: a policy write takes it (its triggers raise
        // it) and then may void this request, so taking it first cannot deadlock with one.
        await this.sequelize.query(LOCK_POLICY, { replacements: { agentId }, transaction });
        const policy = await loadAgentPolicy(this.sequelize, agentId, transaction);
        const granted = grant(policy);
        if ('not_granted' in granted) return { not_granted: granted.not_granted };
        const [claimed] = await this.sequelize.query<{ id: number }>(
          `UPDATE approval_requests SET status = 'approved', decided_by = :by, decided_via = :via, decided_at = now()
          WHERE agent_id = :agentId AND id = :id AND status = 'pending' AND expires_at > now() RETURNING id`,
          { replacements: { agentId, id, ...deciderColumns(decider) }, type: QueryTypes.SELECT, transaction },
        );
        if (!claimed) throw lost;
        // Counted with its record: over a cap, the approval is undone with the transaction, and it stays pending.
        const recordId = await startToolCall(
          this.sequelize,
          // Decided under the policy as this transaction reads it (SEMANTICS §16), whatever the run was resolved from.
          { ...record, approval_request_id: id, approved_by: approverName(decider), policy_version: policy?.version ?? null },
          by,
          transaction,
          granted.caps,
        );
        if (recordId === null) throw capped;
        await this.sequelize.query('UPDATE approval_requests SET tool_call_id = :recordId WHERE id = :id', {
          replacements: { id, recordId },
          transaction,
        });
        return recordId;
      })
      .catch((err: unknown) => {
        if (err === lost) return null;
        if (err === capped) return 'capped' as const;
        throw err;
      });
  }

  /** Denies a pending request; false when it was no longer pending. */
  async deny(agentId: number, id: number, decider: Decider): Promise<boolean> {
    await this.expireDue(agentId);
    const rows = await this.sequelize.query(
      `UPDATE approval_requests SET status = 'denied', decided_by = :by, decided_via = :via, decided_at = now()
        WHERE agent_id = :agentId AND id = :id AND status = 'pending' AND expires_at > now() RETURNING id`,
      { replacements: { agentId, id, ...deciderColumns(decider) }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Voids a pending request that can no longer run as asked; false when it was no longer pending. */
  async void(agentId: number, id: number, reason: string): Promise<boolean> {
    const rows = await this.sequelize.query(
      `UPDATE approval_requests SET status = 'void', void_reason = :reason, decided_at = now()
        WHERE agent_id = :agentId AND id = :id AND status = 'pending' RETURNING id`,
      { replacements: { agentId, id, reason }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Keeps what the one execution of an approved request gave. */
  async storeResult(id: number, result: ApprovalResult): Promise<void> {
    await this.sequelize.query('UPDATE approval_requests SET result = $1::jsonb WHERE id = $2', {
      bind: [JSON.stringify(storableJson(result)), id],
    });
  }

  private async expireDue(agentId: number, transaction?: Transaction): Promise<void> {
    const expired = await this.sequelize.query(EXPIRE_DUE, { replacements: { agentId }, type: QueryTypes.SELECT, transaction });
    if (expired.length > 0) this.onExpired(expired.length);
  }
}

/** How a decider is written on the request: its routing key for a message, nothing for an operator. */
function deciderColumns(decider: Decider): { by: string | null; via: DecidedVia } {
  const { via, routing_key } = decidedBy(decider);
  return { by: routing_key, via };
}

function requestView(row: RequestRow): ApprovalRequestView {
  return {
    id: row.id,
    agent_id: row.agent_id,
    code: row.code,
    tool: row.tool_id,
    input: row.input,
    status: row.status,
    requested_by: {
      run: row.run,
      routing_key: row.routing_key,
      thread_id: row.thread_reference,
      run_id: row.run_id,
      message_id: row.message_id,
    },
    attachment_id: row.attachment_id,
    decided_by: row.decided_via ? { via: row.decided_via, routing_key: row.decided_by } : null,
    decided_at: row.decided_at ? row.decided_at.toISOString() : null,
    void_reason: row.void_reason,
    result: row.result,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
  };
}
