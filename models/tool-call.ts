// The tool-call record: every execution, refusal and skip, with the canonical id and legacy name.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type ForeignKey,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import { tableOptions } from './table-options';
import type { DispatchKind } from '../src/core/types';

/**
 * `started` while the tool runs (written before it runs), then `success` or `failure` in place;
 * `denied` and `skipped` for a tool that never ran; `pending_approval` for a call filed as an
 * approval request (SEMANTICS §12), which runs only if approved, under a record of its own;
 * `interrupted` for a `started` record whose instance died (SEMANTICS §13): outcome unknown, never
 * run again. The one list the API, its filter and the dashboard read.
 */
export const TOOL_CALL_STATUSES = ['started', 'success', 'failure', 'denied', 'skipped', 'pending_approval', 'interrupted'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/**
 * Why a `denied` record was refused (SEMANTICS §16), one stable word an operator can count by:
 * `access_rules` (the agent's access rules refuse the sender), `not_offered` (no attachment admitting
 * the run carries the tool), `needs_approval` (the run may only request it, and this call would have
 * run at once), `cap_exceeded` (no attachment it runs through has room in its caps), `tool_changed`
 * (an MCP tool held since its server changed its definition). The one list the records, the API and
 * the dashboard read.
 */
export const DENIAL_REASONS = ['access_rules', 'not_offered', 'needs_approval', 'cap_exceeded', 'tool_changed'] as const;
export type DenialReason = (typeof DENIAL_REASONS)[number];

export class ToolCall extends Model<InferAttributes<ToolCall>, InferCreationAttributes<ToolCall>> {
  declare id: CreationOptional<number>;
  declare agent_id: ForeignKey<number>;
  declare tool_id: string;
  declare tool_name: string;
  declare status: ToolCallStatus;
  declare run: DispatchKind;
  declare routing_key: string | null;
  declare duration_ms: number;
  declare error: string | null;
  declare approval_request_id: CreationOptional<number | null>;
  declare approved_by: CreationOptional<string | null>;
  declare policy_version: CreationOptional<number | null>;
  declare reason: CreationOptional<DenialReason | null>;
  declare created_at: CreationOptional<Date>;
}

/** The model class bound to one Sequelize instance: each toolgate gets its own, so two never share one. */
export function defineToolCall(sequelize: Sequelize): typeof ToolCall {
  class Bound extends ToolCall {}
  Bound.init(
    {
      // BIGINT comes back from pg as a string; ids are integers in the API, and far below 2^53.
      id: {
        type: DataTypes.BIGINT,
        primaryKey: true,
        autoIncrement: true,
        get(this: ToolCall) {
          return Number(this.getDataValue('id'));
        },
      },
      tool_id: { type: DataTypes.STRING(64), allowNull: false },
      tool_name: { type: DataTypes.STRING(100), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      run: { type: DataTypes.STRING(16), allowNull: false },
      routing_key: { type: DataTypes.STRING(320), allowNull: true },
      duration_ms: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      error: { type: DataTypes.TEXT, allowNull: true },
      approval_request_id: { type: DataTypes.INTEGER, allowNull: true },
      approved_by: { type: DataTypes.STRING(320), allowNull: true },
      policy_version: {
        type: DataTypes.BIGINT,
        allowNull: true,
        get(this: ToolCall) {
          const version = this.getDataValue('policy_version');
          return version === null || version === undefined ? null : Number(version);
        },
      },
      reason: { type: DataTypes.STRING(32), allowNull: true },
      created_at: DataTypes.DATE,
    },
    tableOptions(sequelize, 'ToolCall', 'tool_calls', false),
  );
  return Bound;
}
