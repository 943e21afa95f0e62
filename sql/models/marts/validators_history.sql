-- description: Validators as a history: one row per version of a validator's state, valid from the snapshot it was first seen in that state until the snapshot it was gone or changed.
-- unique: network, subnet, node_id, valid_from
-- incremental_after: snapshot_at from stg_validators
-- not_null: network, weight, started_at, first_seen_at, last_seen_at, count_snapshots, is_current
-- column: network: mainnet or fuji
-- column: subnet: primary, or the subnet id
-- column: node_id: the validator's node id
-- column: valid_from: snapshot_at of the first snapshot showing this version
-- column: valid_to: snapshot_at of the first later snapshot of its subnet in which the validator was gone or changed; null while current
-- column: is_current: valid_to is null: the newest snapshot of its subnet shows this version
-- column: first_seen_at: same as valid_from
-- column: last_seen_at: snapshot_at of the last snapshot showing this version
-- column: count_snapshots: how many snapshots showed this version
-- column: tx_id: the staking transaction of the validation (primary network, permissioned subnets)
-- column: validation_id: the L1 validation id (L1 subnets)
-- column: started_at: start of the validation
-- column: ends_at: end of the validation (null for L1 validators)
-- column: weight: stake (primary network, in nAVAX) or weight (subnet)
-- column: delegator_weight_navax: stake delegated to the validator (primary network)
-- column: total_stake_navax: weight plus delegator_weight_navax (primary network)
-- column: count_delegators: current delegations of the validator (primary network)
-- column: potential_reward_navax: reward of the validation if it completes with enough uptime
-- column: delegation_fee_percent: the validator's fee on its delegators' rewards, in percent
-- column: bls_public_key: the validator's BLS key, if any
--
-- A version is the validator's declared state: transaction, weight, period, fee, potential reward, BLS
-- key and its delegations (count and weight). Meters that move with every snapshot (uptime, connected,
-- an L1 validator's balance) are not part of it; stg_validators keeps them per snapshot. "Gone" is
-- judged against the later snapshots of the validator's own subnet (one partition each): a run whose
-- partition of one subnet failed leaves that subnet's versions as they were, and several workers, each
-- stamping the snapshots it takes with its own run's start, give the same versions as one box. (Judged
-- against every snapshot of the network, a snapshot of another subnet stamped a few seconds apart by
-- another worker showed every validator gone and back.) A subnet whose answer becomes empty stores no
-- rows, so its last validators stay current until it has validators again.
--
-- A build extends the versions the last one left (incremental_after): stg_validators then holds only the
-- snapshots taken since, and the model's own rows (the `this` template) the versions as the last build
-- left them. Each version still current then comes in as one observation standing for the snapshots it
-- covers, which the new snapshots extend, change or close; closed versions never change again. Built
-- whole, `this` is empty and every snapshot is read, with the same result.
with validators as (
    select * from stg_validators
),

-- The versions the newest snapshot of the last build showed (none when built whole).
carried as (
    select
        network,
        subnet,
        node_id,
        first_seen_at,
        last_seen_at as snapshot_at,
        count_snapshots,
        tx_id,
        validation_id,
        started_at,
        ends_at,
        weight,
        delegator_weight_navax,
        count_delegators as delegator_count,
        potential_reward_navax,
        delegation_fee_percent,
        bls_public_key
    from {{ this }}
    where is_current
),

observations as (
    select
        network,
        subnet,
        node_id,
        snapshot_at as first_seen_at,
        snapshot_at,
        cast(1 as bigint) as count_snapshots,
        tx_id,
        validation_id,
        started_at,
        ends_at,
        weight,
        delegator_weight_navax,
        delegator_count,
        potential_reward_navax,
        delegation_fee_percent,
        bls_public_key
    from validators
    union all by name
    select * from carried
),

snapshots as (
    select
        network,
        subnet,
        snapshot_at,
        row_number() over (partition by network, subnet order by snapshot_at) as snapshot_seq
    from (select distinct network, subnet, snapshot_at from observations)
),

observed as (
    select
        observations.*,
        snapshots.snapshot_seq,
        -- Compared as a struct, field by field: a null stays in its own place (a tx_id and a
        -- validation_id swapping values differ), and two nulls in the same place are the same.
        {
            'tx_id': observations.tx_id,
            'validation_id': observations.validation_id,
            'started_at': observations.started_at,
            'ends_at': observations.ends_at,
            'weight': observations.weight,
            'delegator_weight_navax': observations.delegator_weight_navax,
            'delegator_count': observations.delegator_count,
            'potential_reward_navax': observations.potential_reward_navax,
            'delegation_fee_percent': observations.delegation_fee_percent,
            'bls_public_key': observations.bls_public_key
        } as state
    from observations
    inner join snapshots
        on observations.network = snapshots.network
        and observations.subnet = snapshots.subnet
        and observations.snapshot_at = snapshots.snapshot_at
),

marked as (
    select
        *,
        case
            when lag(snapshot_seq) over validator is distinct from snapshot_seq - 1 then 1
            when lag(state) over validator is distinct from state then 1
            else 0
        end as is_new_version
    from observed
    window validator as (partition by network, subnet, node_id order by snapshot_at)
),

numbered as (
    select
        *,
        sum(is_new_version) over (
            partition by network, subnet, node_id
            order by snapshot_at
            rows between unbounded preceding and current row
        ) as version_number
    from marked
),

versions as (
    select
        network,
        subnet,
        node_id,
        version_number,
        min(first_seen_at) as first_seen_at,
        max(snapshot_at) as last_seen_at,
        max(snapshot_seq) as last_seq,
        cast(sum(count_snapshots) as bigint) as count_snapshots,
        arg_min(tx_id, snapshot_at) as tx_id,
        arg_min(validation_id, snapshot_at) as validation_id,
        arg_min(started_at, snapshot_at) as started_at,
        arg_min(ends_at, snapshot_at) as ends_at,
        arg_min(weight, snapshot_at) as weight,
        arg_min(delegator_weight_navax, snapshot_at) as delegator_weight_navax,
        arg_min(delegator_count, snapshot_at) as count_delegators,
        arg_min(potential_reward_navax, snapshot_at) as potential_reward_navax,
        arg_min(delegation_fee_percent, snapshot_at) as delegation_fee_percent,
        arg_min(bls_public_key, snapshot_at) as bls_public_key
    from numbered
    group by network, subnet, node_id, version_number
),

final as (
    select
        versions.network,
        versions.subnet,
        versions.node_id,
        versions.first_seen_at as valid_from,
        next_snapshot.snapshot_at as valid_to,
        next_snapshot.snapshot_at is null as is_current,
        first_seen_at,
        last_seen_at,
        count_snapshots,
        tx_id,
        validation_id,
        started_at,
        ends_at,
        weight,
        delegator_weight_navax,
        case when versions.subnet = 'primary' then weight + coalesce(delegator_weight_navax, 0) end as total_stake_navax,
        count_delegators,
        potential_reward_navax,
        delegation_fee_percent,
        bls_public_key
    from versions
    left join snapshots as next_snapshot
        on versions.network = next_snapshot.network
        and versions.subnet = next_snapshot.subnet
        and versions.last_seq + 1 = next_snapshot.snapshot_seq
)

select * from final
