import { Migration } from '@mikro-orm/migrations';

/**
 * The operator's user search (console Users page, `tollgate user list --search`) matches any part
 * of the email (`lower(email) like '%text%'`), which no b-tree can serve: without this index a search
 * for a rare text reads every user of the project (742 ms against 407 ms with one user, for a project
 * of 1,000,000 users). A trigram index on the lower-cased email (pg_trgm's gin_trgm_ops) finds the
 * matching rows directly, for texts of 3 characters or more.
 *
 * pg_trgm is a contrib extension: it ships with PostgreSQL's contrib package (Debian's
 * postgresql-NN, the embedded server's binaries, the usual managed services), and since PostgreSQL 13
 * it is "trusted", so a role with CREATE on the database may create it. Where it is not installed,
 * or this role may not create it, the migration creates neither and notes it: the search stays a
 * scan of the project's users (correct, only slower), and creating the extension and running
 * `tollgate migrate` again later does not help (the migration has run); docs/benchmarks.md says how to
 * create the index by hand then. Building the index locks writes to users for its duration (about
 * 10 s per million users on a small machine).
 */
export class Migration20261207000000UserSearchTrigram extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      do $$
      declare
        trgm_schema text;
      begin
        if not exists (select 1 from pg_extension where extname = 'pg_trgm')
           and exists (select 1 from pg_available_extensions where name = 'pg_trgm') then
          begin
            create extension pg_trgm;
          exception when others then
            raise notice 'pg_trgm could not be created (%): the user search by email stays a scan', sqlerrm;
          end;
        end if;
        select n.nspname into trgm_schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm';
        if trgm_schema is null then
          raise notice 'pg_trgm is not available: the user search by email stays a scan';
        else
          execute format('create index if not exists users_email_trgm_idx on users using gin (lower(email) %I.gin_trgm_ops)', trgm_schema);
        end if;
      end
      $$;`);
  }

  override async down(): Promise<void> {
    // The extension stays: other objects of the database may use it.
    this.addSql('drop index if exists users_email_trgm_idx;');
  }
}
