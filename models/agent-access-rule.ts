// An agent access rule: one allow/deny address pattern deciding whether the agent handles a
// sender's message at all (SEMANTICS §9).
import {
  Model,
  type CreationOptional,
  type ForeignKey,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { RuleKind } from '../src/core/types';
import { RULE_ATTRIBUTES } from './rule-attributes';
import { tableOptions } from './table-options';

export class AgentAccessRule extends Model<InferAttributes<AgentAccessRule>, InferCreationAttributes<AgentAccessRule>> {
  declare id: CreationOptional<number>;
  declare agent_id: ForeignKey<number>;
  declare kind: RuleKind;
  declare pattern: string;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

/** The model class bound to one Sequelize instance: each toolgate gets its own, so two never share one. */
export function defineAgentAccessRule(sequelize: Sequelize): typeof AgentAccessRule {
  class Bound extends AgentAccessRule {}
  Bound.init(RULE_ATTRIBUTES, tableOptions(sequelize, 'AgentAccessRule', 'agent_access_rules'));
  return Bound;
}
