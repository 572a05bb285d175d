import { ApiKeyEntity, ProjectEntity } from './entities/project.entity';
import { UserEntity } from './entities/user.entity';

/** Every MikroORM mapping; register a feature's entities here. */
export const ENTITIES = [ProjectEntity, ApiKeyEntity, UserEntity];
