// A gate rule: one allow/deny address pattern on an attachment's sender gate.
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

export class AgentToolkitRule extends Model<InferAttributes<AgentToolkitRule>, InferCreationAttributes<AgentToolkitRule>> {
  declare id: CreationOptional<number>;
  declare agent_toolkit_id: ForeignKey<number>;
  declare kind: RuleKind;
  declare pattern: string;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

/** The model class bound to one Sequelize instance: each toolgate gets its own, so two never share one. */
export function defineAgentToolkitRule(sequelize: Sequelize): typeof AgentToolkitRule {
  class Bound extends AgentToolkitRule {}
  Bound.init(RULE_ATTRIBUTES, tableOptions(sequelize, 'AgentToolkitRule', 'agent_toolkit_rules'));
  return Bound;
}
