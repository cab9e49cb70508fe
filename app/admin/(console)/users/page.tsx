import { listUsers } from "@/server/identity";
import { licenseStatus } from "@/server/license";
import { Badge, Card, Table, Td } from "@/components/ui";
import { formatWhen } from "@/components/admin/format";
import { CreateUserForm, UserActions } from "./user-forms";
import { currentUser } from "../../../_lib/session";

export const metadata = { title: "Users · Obscura admin" };

const STATUS_COLOR = { active: "green", disabled: "gray", deleted: "red" } as const;

export default async function UsersPage() {
  const [users, license, me] = await Promise.all([listUsers(), licenseStatus(), currentUser()]);
  const shown = users.filter((u) => u.status !== "deleted");
  const active = shown.filter((u) => u.status === "active").length;
  return (
    <div className="space-y-6">
      <div className="flex items-end justify-between">
        <div>
          <h1 className="text-2xl font-bold tracking-tight">Users</h1>
          <p className="mt-1 text-sm text-slate-500">
            {active} active of {license.seats} seat{license.seats === 1 ? "" : "s"}. Reviewers see the videos whose <code>acl</code> names them; administrators see all.
          </p>
        </div>
      </div>
      <Card>
        <Table head={["User", "Role", "Status", "Last sign-in", ""]} empty="No users yet.">
          {shown.map((u) => (
            <tr key={u.id} data-user={u.username}>
              <Td>
                <p className="font-medium text-slate-900">{u.displayName ?? u.username}</p>
                <p className="text-xs text-slate-500">{u.username}</p>
              </Td>
              <Td>
                <Badge color={u.role === "admin" ? "blue" : "gray"}>{u.role}</Badge>
              </Td>
              <Td>
                <Badge color={STATUS_COLOR[u.status]}>{u.status}</Badge>
                {u.lockedUntil && new Date(u.lockedUntil) > new Date() && (
                  <span className="ml-2">
                    <Badge color="amber">locked until {formatWhen(u.lockedUntil)}</Badge>
                  </span>
                )}
              </Td>
              <Td className="text-slate-500">{formatWhen(u.lastSignInAt)}</Td>
              <Td className="text-right">{u.id !== me?.id && <UserActions id={u.id} username={u.username} status={u.status} role={u.role} />}</Td>
            </tr>
          ))}
        </Table>
      </Card>
      <Card title="Add a user" description="They sign in with this username and password; they can change the password afterwards.">
        <CreateUserForm />
      </Card>
    </div>
  );
}
