import { ApiKeyEntity, ProjectEntity } from './entities/project.entity';
import { UserEntity } from './entities/user.entity';
import { MFA_ENTITIES } from './entities/mfa.entity';
import { AuthorizationCodeEntity, IdentityEntity, OAuthStateEntity } from './entities/oauth.entity';

/** Every MikroORM mapping; register a feature's entities here. */
export const ENTITIES = [ProjectEntity, ApiKeyEntity, UserEntity, IdentityEntity, OAuthStateEntity, AuthorizationCodeEntity, ...MFA_ENTITIES];
