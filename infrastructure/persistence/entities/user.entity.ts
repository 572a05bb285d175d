import { defineEntity, p } from '@mikro-orm/core';

export const UserEntity = defineEntity({
  name: 'UserRow',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    email: p.text().nullable(),
    name: p.text().nullable(),
    picture: p.text().nullable(),
    provider: p.text(),
    emailVerified: p.boolean().fieldName('email_verified'),
    locale: p.text().nullable(),
    passwordHash: p.text().nullable().fieldName('password_hash'),
    phone: p.text().nullable(),
    phoneVerified: p.boolean().fieldName('phone_verified'),
    disabled: p.boolean(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});
