// The agent record: what toolkits attach to. `enabled_tools` is the legacy string, kept untouched.
import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import { tableOptions } from './table-options';

export class Agent extends Model<InferAttributes<Agent>, InferCreationAttributes<Agent>> {
  declare id: CreationOptional<number>;
  declare name: string;
  declare description: string | null;
  declare system_prompt: string | null;
  declare escalation_address: CreationOptional<string | null>;
  declare enabled_tools: string | null;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

/** The model class bound to one Sequelize instance: each toolgate gets its own, so two never share one. */
export function defineAgent(sequelize: Sequelize): typeof Agent {
  class Bound extends Agent {}
  Bound.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      name: { type: DataTypes.STRING(200), allowNull: false },
      description: { type: DataTypes.TEXT, allowNull: true },
      system_prompt: { type: DataTypes.TEXT, allowNull: true },
      escalation_address: { type: DataTypes.STRING(320), allowNull: true, defaultValue: null },
      enabled_tools: { type: DataTypes.TEXT, allowNull: true },
      created_at: DataTypes.DATE,
      updated_at: DataTypes.DATE,
    },
    tableOptions(sequelize, 'Agent', 'agents'),
  );
  return Bound;
}
