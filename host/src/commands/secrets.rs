//! `herald secrets`: the operator's door to an instance's secrets, straight on the store (a
//! running server sees a change at its next read; headers it cached from the old value last until
//! their lifetime ends).

use std::io::Read as _;

use anyhow::{bail, Context};

use super::{control, open_instance};
use crate::cli::{InstanceSecrets, SecretsCommand};

pub async fn run(command: SecretsCommand) -> anyhow::Result<()> {
    match command {
        SecretsCommand::List(InstanceSecrets { store, key: _, instance }) => {
            let (_, tenant) = open_instance(&store, &instance).await?;
            for secret in tenant.db.secrets().await? {
                let at = crate::clock::utc_at(secret.set_at).format("%Y-%m-%dT%H:%M:%SZ");
                println!("{}\tset {at}", secret.name);
            }
            Ok(())
        }
        SecretsCommand::Set { target: InstanceSecrets { store, key, instance }, name } => {
            crate::secrets::check_name(&name).map_err(anyhow::Error::msg)?;
            let mut value = String::new();
            std::io::stdin().read_to_string(&mut value).context("reading the value from standard input")?;
            // A value typed or piped with `echo` ends with a line break that is not part of it.
            let value = value.strip_suffix('\n').map(|v| v.strip_suffix('\r').unwrap_or(v)).unwrap_or(&value);
            let ring = key.settings().load(&store.data_dir)?;
            let (_, tenant) = open_instance(&store, &instance).await?;
            let (_, created) = crate::secrets::set(&ring, &tenant, &name, value).await?;
            println!("{instance}: secret {name} {}", if created { "created" } else { "replaced" });
            Ok(())
        }
        SecretsCommand::Delete { target: InstanceSecrets { store, key: _, instance }, name } => {
            let (_, tenant) = open_instance(&store, &instance).await?;
            if !tenant.db.delete_secret(&name).await? {
                bail!("{instance} has no secret '{name}'");
            }
            println!("{instance}: secret {name} deleted");
            Ok(())
        }
        SecretsCommand::Rotate { store, key } => {
            let ring = key.settings().load(&store.data_dir)?;
            let db = control(&store).await?;
            let mut failed = false;
            for instance in db.instances().await? {
                let customer_id = instance.settings.customer_id.clone();
                let (_, tenant) = open_instance(&store, &customer_id).await?;
                let (resealed, unopenable) = crate::secrets::rotate(&ring, &tenant).await?;
                println!("{customer_id}: {resealed} secret(s) sealed with key {}", ring.current_id());
                for name in unopenable {
                    failed = true;
                    eprintln!("{customer_id}: secret {name} cannot be opened with this key ring; set it again");
                }
            }
            if failed {
                bail!("some secrets could not be sealed again");
            }
            Ok(())
        }
    }
}
