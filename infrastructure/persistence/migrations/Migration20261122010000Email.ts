import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010000Email extends Migration {
  override async up(): Promise<void> {
    // Tables of the Email feature are added here.
  }
}
