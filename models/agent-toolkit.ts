// The attachment: one toolkit granted to one agent, on its own terms (gate rules, scheduled runs).
import {
  DataTypes,
  Model,
  type CreationOptional,
  type ForeignKey,
  type InferAttributes,
  type InferCreationAttributes,
  type NonAttribute,
  type Sequelize,
} from 'sequelize';
import { tableOptions } from './table-options';
import type { CapRule, RuleKind } from '../src/core/types';
import type { AgentToolkitRule } from './agent-toolkit-rule';
import type { Toolkit } from './toolkit';

export type AttachmentOrigin = 'operator' | 'default' | 'legacy';

/** Candidate terms as `candidate` keeps them (SEMANTICS §15): only the fields given, patterns normalized. */
export interface StoredCandidate {
  rules?: { kind: RuleKind; pattern: string }[];
  caps?: CapRule[];
  approvers?: string[] | null;
  allow_proactive?: boolean;
}

export class AgentToolkit extends Model<InferAttributes<AgentToolkit>, InferCreationAttributes<AgentToolkit>> {
  declare id: CreationOptional<number>;
  declare agent_id: ForeignKey<number>;
  declare toolkit_id: ForeignKey<number>;
  declare allow_proactive: CreationOptional<boolean>;
  declare origin: CreationOptional<AttachmentOrigin>;
  /** Approver patterns when its members' calls need approval (SEMANTICS §12); null when they need none. */
  declare approvers: CreationOptional<string[] | null>;
  /** How often its members may run (SEMANTICS §13). */
  declare caps: CreationOptional<CapRule[]>;
  /** Terms tried beside the live ones (SEMANTICS §15), only the fields given; null when none. */
  declare candidate: CreationOptional<StoredCandidate | null>;
  /** When the candidate was set: its shadow counts from then. */
  declare candidate_at: CreationOptional<Date | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
  declare toolkit?: NonAttribute<Toolkit>;
  declare rules?: NonAttribute<AgentToolkitRule[]>;
}

/** The model class bound to one Sequelize instance: each toolgate gets its own, so two never share one. */
export function defineAgentToolkit(sequelize: Sequelize): typeof AgentToolkit {
  class Bound extends AgentToolkit {}
  Bound.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      allow_proactive: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      origin: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'operator' },
      approvers: { type: DataTypes.ARRAY(DataTypes.STRING(320)), allowNull: true, defaultValue: null },
      caps: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
      candidate: { type: DataTypes.JSONB, allowNull: true, defaultValue: null },
      candidate_at: { type: DataTypes.DATE, allowNull: true, defaultValue: null },
      created_at: DataTypes.DATE,
      updated_at: DataTypes.DATE,
    },
    tableOptions(sequelize, 'AgentToolkit', 'agent_toolkits'),
  );
  return Bound;
}
