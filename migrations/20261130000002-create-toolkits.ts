// Toolkits: global, named bundles of tool ids. The database, not only the app, keeps names unique
// case-insensitively, system keys unique, and the two system toolkits undeletable.
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('toolkits', {
    id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
    name: { type: Sequelize.STRING(200), allowNull: false },
    description: { type: Sequelize.TEXT, allowNull: false, defaultValue: '' },
    member_tool_ids: { type: Sequelize.ARRAY(Sequelize.STRING(64)), allowNull: false, defaultValue: [] },
    system_key: { type: Sequelize.STRING(32), allowNull: true },
    // Set only on toolkits the enabled_tools planner made: the sorted id set they stand for, so
    // agents with the same set share one toolkit and an undo finds exactly what it made.
    legacy_tool_set: { type: Sequelize.TEXT, allowNull: true },
    created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
    updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
  await queryInterface.sequelize.query(`
    CREATE UNIQUE INDEX toolkits_name_lower_key ON toolkits (lower(name));
    CREATE UNIQUE INDEX toolkits_system_key_key ON toolkits (system_key) WHERE system_key IS NOT NULL;
    CREATE UNIQUE INDEX toolkits_legacy_tool_set_key ON toolkits (legacy_tool_set) WHERE legacy_tool_set IS NOT NULL;
    ALTER TABLE toolkits ADD CONSTRAINT toolkits_system_key_check
      CHECK (system_key IS NULL OR system_key IN ('all_tools', 'default_tools'));
    ALTER TABLE toolkits ADD CONSTRAINT toolkits_name_not_blank CHECK (btrim(name) <> '');
    CREATE FUNCTION toolkits_refuse_system_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'system toolkit % cannot be deleted', OLD.system_key
        USING ERRCODE = 'restrict_violation';
    END $$;
    CREATE TRIGGER toolkits_system_undeletable BEFORE DELETE ON toolkits
      FOR EACH ROW WHEN (OLD.system_key IS NOT NULL) EXECUTE FUNCTION toolkits_refuse_system_delete();
  `);
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('toolkits');
  await queryInterface.sequelize.query('DROP FUNCTION IF EXISTS toolkits_refuse_system_delete()');
}
