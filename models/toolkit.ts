// The toolkit record: a named bundle of tool ids, global, attachable to many agents.
import { z } from 'zod';
import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import { tableOptions } from './table-options';

export const systemKeySchema = z.enum(['all_tools', 'default_tools']);
export type SystemKey = z.infer<typeof systemKeySchema>;

export class Toolkit extends Model<InferAttributes<Toolkit>, InferCreationAttributes<Toolkit>> {
  declare id: CreationOptional<number>;
  declare name: string;
  declare description: CreationOptional<string>;
  declare member_tool_ids: string[];
  declare system_key: CreationOptional<SystemKey | null>;
  declare legacy_tool_set: CreationOptional<string | null>;
  declare created_at: CreationOptional<Date>;
  declare updated_at: CreationOptional<Date>;
}

/** The model class bound to one Sequelize instance: each toolgate gets its own, so two never share one. */
export function defineToolkit(sequelize: Sequelize): typeof Toolkit {
  class Bound extends Toolkit {}
  Bound.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      name: { type: DataTypes.STRING(200), allowNull: false },
      description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
      member_tool_ids: { type: DataTypes.ARRAY(DataTypes.STRING(64)), allowNull: false, defaultValue: [] },
      system_key: { type: DataTypes.STRING(32), allowNull: true },
      legacy_tool_set: { type: DataTypes.TEXT, allowNull: true },
      created_at: DataTypes.DATE,
      updated_at: DataTypes.DATE,
    },
    tableOptions(sequelize, 'Toolkit', 'toolkits'),
  );
  return Bound;
}
