import { Migration } from '@mikro-orm/migrations';

/**
 * Passkeys (docs/passkeys.md).
 * - passkeys: WebAuthn credentials of end users; the credential id is unique in a project, the
 *   public key is the authenticator's COSE key, the counter only grows.
 * - passkey_challenges: the challenges handed out with ceremony options, stored as a SHA-256 hash,
 *   each for one ceremony (registration, sign_in, mfa, sign_up), consumed once by one statement.
 *   An MFA ceremony names its MFA challenge; registration and sign-up name their user.
 * Project settings gain `passkeys` in their JSON when an operator sets them (absent: the defaults).
 */
export class Migration20261209000000Passkeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table passkeys (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        credential_id text not null,
        public_key bytea not null,
        counter bigint not null default 0 check (counter >= 0),
        transports jsonb not null default '[]'::jsonb,
        aaguid text not null,
        authenticator_name text null,
        device_type text not null check (device_type in ('singleDevice', 'multiDevice')),
        backed_up boolean not null,
        name text not null,
        created_at timestamptz not null,
        last_used_at timestamptz null
      );`);
    this.addSql('create unique index passkeys_credential_uq on passkeys(project_id, credential_id);');
    this.addSql('create index passkeys_user_idx on passkeys(project_id, user_id, created_at desc);');
    this.addSql(`
      create table passkey_challenges (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        ceremony text not null check (ceremony in ('registration', 'sign_in', 'mfa', 'sign_up')),
        challenge_hash text not null,
        user_id uuid null references users(id) on delete cascade,
        mfa_challenge_id uuid null references mfa_challenges(id) on delete cascade,
        enrollment_challenge_id uuid null references mfa_challenges(id) on delete cascade,
        user_verification text not null check (user_verification in ('required', 'preferred')),
        created_at timestamptz not null,
        expires_at timestamptz not null,
        consumed_at timestamptz null
      );`);
    this.addSql('create unique index passkey_challenges_hash_uq on passkey_challenges(challenge_hash);');
    this.addSql('create index passkey_challenges_expiry_idx on passkey_challenges(expires_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists passkey_challenges;');
    this.addSql('drop table if exists passkeys;');
  }
}
