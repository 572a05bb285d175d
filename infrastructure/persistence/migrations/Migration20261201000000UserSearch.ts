import { Migration } from '@mikro-orm/migrations';

/**
 * The operator's Users list (console, `tollgate user list`): a project's users newest first, a page
 * at a time after (created_at, id), read from this index without sorting the project's users.
 */
export class Migration20261201000000UserSearch extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index users_project_created_idx on users(project_id, created_at desc, id desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists users_project_created_idx;');
  }
}
